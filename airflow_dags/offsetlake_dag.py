"""offsetlake, scheduled (Airflow 3): snapshot -> run -> audit -> quality -> report -> gate;
and the lake's retention, ``offsetlake_vacuum``, on a schedule of its own.

Every data interval turns one snapshot of ``__consumer_offsets`` into the lake's tables and checks
them. The snapshot is either captured from a cluster (an Airflow connection whose host:port is a
broker) or the newest segment snapshot in a landing directory. Its id derives from the data
interval, never from the clock, so a rerun of an interval replaces exactly its own rows.

The run is incremental (``offsetlake run``'s default: the lake keeps each record once, an
interval reads and replays only what changed since the last one, and keeps what compaction
deleted); the ``full`` param (``airflow.full`` in conf/) makes it ``offsetlake run --full``
instead. A lake keeps the kind it was built as, so a DAG over a lake of full runs goes on with
full runs. An incremental lake takes snapshots in order: rerunning the newest interval replaces
it, rerunning an older one is refused (exit 9). ``offsetlake_vacuum`` (``airflow.vacuum`` in
conf/) drops the per-snapshot state of all but the newest ``keep`` snapshots, keeping every
record and the history; it skips a lake that is not incremental.

The gate comes last, so a run with findings still has its report. The audit runs with
``--fail-on never`` and writes the verdict at ``fail_on`` to ``<lake>/_reports/audit-<id>.json``;
findings never fail it. The ``gate`` task (plain Python) reads that summary after the report and
fails the run when findings reach ``fail_on``, naming the counts and the first findings. Trigger
rules, so that quality and report run whenever there are tables to check:

* ``audit``: all_success (after ``run``). Only an error fails it, never a finding, so it takes
  the DAG's retries like the other Spark tasks.
* ``quality`` (after ``run`` and ``audit``) and ``report`` (after ``run`` and ``quality``):
  all_done_min_one_success. The edge from ``run`` is what makes this "run succeeded and the
  previous check has finished, whatever its outcome": when ``run`` fails, every later task is
  upstream_failed, so none of them has a success to count and none runs on missing tables.
  A failed quality suite (or a crashed audit) therefore does not cost the report.
* ``gate`` (after ``audit`` and ``report``): all_done_min_one_success, so it judges even when the
  report crashed. It reads the summary path the audit returned in this run (XCom), never an
  earlier try's file; without one (the audit failed) it fails too. No retries: a finding does not
  go away on retry.

Parsing reads only ``conf/offsetlake.yaml`` (schedule, retries, defaults): no Spark import, no lake
or landing access, no connection lookup; all of that happens inside the tasks. The Spark jobs go
through ``SparkSubmitOperator`` (the ``spark_conn_id`` connection names the master) with the
``airflow.spark_conf`` settings; the CLI command modules are the spark-submit applications. Their
driver JVM starts as ``offsetlake run`` starts its own: the snapshot task picks the options (the
class archive; C1 only, for a snapshot small enough for the driver to read).
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path

PROJECT_ROOT = Path(__file__).absolute().parents[1]
if str(PROJECT_ROOT) not in sys.path:  # the DAG folder is on sys.path, the project root is not
    sys.path.insert(0, str(PROJECT_ROOT))

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator  # noqa: E402
from airflow.sdk import DAG, Param, task  # noqa: E402

from jobs.runtime.config import load_section  # noqa: E402  (YAML only)

DAG_ID = "offsetlake"
VACUUM_DAG_ID = "offsetlake_vacuum"
SEVERITIES = ["critical", "high", "medium", "low", "info", "never"]  # the gate's fail_on
SETTINGS = load_section("airflow")
COMMANDS = PROJECT_ROOT / "jobs" / "commands"
SNAPSHOT = "ti.xcom_pull(task_ids='snapshot')"
TARGET_VERSIONS = "<target versions>"  # expanded by AuditSubmitOperator
FULL = "<--full when params.full>"     # expanded by RunSubmitOperator
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"


def snapshot_id_for(interval_start: datetime) -> str:
    """The snapshot id of a data interval: its start, to the second, in UTC."""
    return "interval-" + interval_start.strftime("%Y%m%dT%H%M%SZ")


def newest_landing_snapshot(landing_dir: Path, not_after: datetime) -> Path:
    """The newest snapshot directory in ``landing_dir`` that had landed by ``not_after``.

    Bounded by the interval's end so a rerun of an old interval picks what it picked then.
    """
    limit = not_after.timestamp()
    landed = [p for p in Path(landing_dir).iterdir()
              if p.is_dir() and not p.name.startswith(".") and p.stat().st_mtime <= limit]
    if not landed:
        raise FileNotFoundError(f"no snapshot directory in {landing_dir} landed by {not_after}")
    return max(landed, key=lambda p: (p.stat().st_mtime, p.name))


def _absolute(path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else PROJECT_ROOT / p


def _capture(conn_id: str, out: Path) -> Path:
    """Capture the cluster behind ``conn_id`` into ``out``, unless an earlier try of this interval
    already finished one (its manifest is written last)."""
    import subprocess

    from airflow.sdk import BaseHook

    if (out / "manifest.json").exists():
        return out
    conn = BaseHook.get_connection(conn_id)
    servers = conn.host if conn.port is None else f"{conn.host}:{conn.port}"
    subprocess.run([sys.executable, "-m", "jobs.cli", "capture", "--bootstrap-server", servers,
                    "--out", str(out)], check=True, cwd=PROJECT_ROOT)
    return out


@task(task_id="snapshot")
def snapshot(params=None, data_interval_start=None, data_interval_end=None, logical_date=None,
             dag_run=None) -> dict:
    """Resolve this interval's snapshot; the other tasks read its id, path and lake from XCom."""
    start = data_interval_start or logical_date or dag_run.run_after
    end = data_interval_end or start
    snapshot_id = snapshot_id_for(start)
    landing = _absolute(params["landing_dir"])
    if params["source"] == "capture":
        path = _capture(params["kafka_conn_id"], landing / snapshot_id)
    else:
        path = newest_landing_snapshot(landing, end)
    print(f"snapshot {snapshot_id}: {path}")
    return {"snapshot_id": snapshot_id, "path": str(path), "lake": str(_absolute(params["lake"])),
            "driver_java_options": _driver_java_options(path)}


def _driver_java_options(path: Path) -> str:
    """The Spark jobs' driver JVM options for this snapshot, as ``offsetlake run`` would start its
    own JVM: the class archive, and C1 only when the driver reads the snapshot itself (segment
    files of at most ``ingest.local_bytes``; its audit, quality and report are as small)."""
    from jobs.runtime.config import load_config
    from jobs.runtime.session import driver_java_options
    from jobs.stages.ingest import read_in_driver

    cfg = load_config()
    return driver_java_options(cfg, short=read_in_driver([str(path)], cfg.ingest))


class RunSubmitOperator(SparkSubmitOperator):
    """spark-submit of the run: ``--full`` when the ``full`` param says so, else nothing (the
    run's default: incremental, or full in a lake of full runs)."""

    def execute(self, context):
        flag = ["--full"] if context["params"]["full"] else []
        self.application_args = [a for arg in self.application_args
                                 for a in (flag if arg == FULL else [arg])]
        return super().execute(context)


class AuditSubmitOperator(SparkSubmitOperator):
    """spark-submit of the audit (``--fail-on never``, findings printed in this task's log); returns
    the path of the gate summary it wrote, for the gate task."""

    def execute(self, context):
        # One --target-version per version: a template renders one argument, not a list.
        versions = [a for v in context["params"]["target_versions"] for a in ("--target-version", v)]
        self.application_args = [a for arg in self.application_args
                                 for a in (versions if arg == TARGET_VERSIONS else [arg])]
        summary = Path(self.application_args[self.application_args.index("--summary") + 1])
        # An earlier try's summary goes first: after a failed audit the report must find none.
        summary.unlink(missing_ok=True)
        super().execute(context)
        return str(summary)


@task(task_id="gate", trigger_rule="all_done_min_one_success", retries=0)
def gate(ti=None) -> str:
    """Fail the run when the audit's findings reach ``fail_on``; quality and report have run."""
    from jobs.report.gate import check, load_summary

    path = ti.xcom_pull(task_ids="audit")
    summary = load_summary(Path(path)) if path else None
    if summary is None:
        raise RuntimeError("no gate summary from the audit in this run (did the audit fail?): "
                           "nothing to judge")
    verdict = check(summary)  # raises GateFailed, naming the findings
    print(verdict)
    return verdict


def delta_jars() -> str:
    """The Delta jars for spark-submit's --jars (a macro: evaluated when a task runs)."""
    from jobs.runtime.config import load_config
    from jobs.runtime.session import delta_jars as cached_jars

    return ",".join(str(j) for j in cached_jars(load_config().jars_dir))


def _spark_conf() -> dict[str, str]:
    """``airflow.spark_conf`` of conf/, the snapshot task's driver JVM options after any given
    there."""
    conf = {str(k): str(v) for k, v in (SETTINGS.get("spark_conf") or {}).items()}
    given = conf.get(DRIVER_OPTIONS, "")
    conf[DRIVER_OPTIONS] = (given + " {{ " + SNAPSHOT + "['driver_java_options'] }}").strip()
    return conf


def spark_job(task_id: str, application: str, args: list[str], operator=SparkSubmitOperator,
              conf: dict[str, str] | None = None, **kwargs):
    """A spark-submit task of a CLI command module (``conf``: default ``airflow.spark_conf``
    with the snapshot task's driver JVM options)."""
    return operator(
        task_id=task_id, application=str(COMMANDS / application), application_args=args,
        conn_id=SETTINGS.get("spark_conn_id", "spark_default"),
        conf=_spark_conf() if conf is None else conf,
        jars="{{ delta_jars() }}", name=f"offsetlake-{task_id}",
        env_vars={"PYTHONPATH": str(PROJECT_ROOT), "PYSPARK_PYTHON": sys.executable,
                  "PYSPARK_DRIVER_PYTHON": sys.executable},
        **kwargs)


# What both DAGs share: one run at a time (one writer per lake), conf/'s retries, the jar macro.
DAG_SETTINGS = dict(
    start_date=datetime(2026, 1, 1), catchup=False, max_active_runs=1, tags=["offsetlake"],
    default_args={"retries": int(SETTINGS.get("retries", 2)),
                  "retry_delay": timedelta(minutes=float(SETTINGS.get("retry_delay_minutes", 5)))},
    user_defined_macros={"delta_jars": delta_jars})

with DAG(
    dag_id=DAG_ID,
    description="__consumer_offsets snapshot -> Delta tables -> audit, quality, report",
    schedule=SETTINGS.get("schedule", "@hourly"),
    **DAG_SETTINGS,
    params={
        "source": Param(SETTINGS.get("source", "landing"), enum=["landing", "capture"],
                        description="capture from kafka_conn_id, or newest snapshot in landing_dir"),
        "landing_dir": Param(str(SETTINGS.get("landing_dir", "./landing")), type="string"),
        "kafka_conn_id": Param(str(SETTINGS.get("kafka_conn_id", "kafka_default")), type="string"),
        "lake": Param(str(SETTINGS.get("lake", "./lake")), type="string"),
        "target_versions": Param([str(v) for v in SETTINGS.get("target_versions", [])],
                                 type="array", description="downgrade targets the audit checks"),
        "fail_on": Param(str(SETTINGS.get("fail_on", "high")).lower(), enum=SEVERITIES),
        "full": Param(bool(SETTINGS.get("full", False)), type="boolean",
                      description="offsetlake run --full: each interval's tables rebuilt from "
                                  "its snapshot alone (default: incremental)"),
    },
) as dag:
    lake = "{{ " + SNAPSHOT + "['lake'] }}"
    snapshot_id = "{{ " + SNAPSHOT + "['snapshot_id'] }}"
    summary = lake + "/_reports/audit-" + snapshot_id + ".json"
    found = snapshot()
    run = spark_job("run", "run.py", ["{{ " + SNAPSHOT + "['path'] }}", "--lake", lake,
                                      "--snapshot-id", snapshot_id, FULL],
                    operator=RunSubmitOperator)
    audit = spark_job("audit", "audit.py",
                      ["--lake", lake, "--snapshot", snapshot_id, "--fail-on", "never",
                       "--gate-on", "{{ params.fail_on }}", "--summary", summary, TARGET_VERSIONS],
                      operator=AuditSubmitOperator)
    # The trigger rules: see the module docstring.
    quality = spark_job("quality", "quality.py", ["--lake", lake, "--snapshot-id", snapshot_id],
                        trigger_rule="all_done_min_one_success")
    report = spark_job("report", "report.py",
                       ["--lake", lake, "--snapshot-id", snapshot_id, "--audit-summary", summary,
                        "--out", lake + "/_reports/report-" + snapshot_id + ".html"],
                       trigger_rule="all_done_min_one_success")
    verdict = gate()
    found >> run >> audit >> quality >> report >> verdict
    run >> [quality, report]  # they need the tables, whatever happened in between
    audit >> verdict          # the gate judges the audit's summary even when the report crashed


VACUUM = SETTINGS.get("vacuum") or {}


@task.short_circuit(task_id="incremental")
def incremental_lake(params=None) -> bool:
    """Whether the lake is an incremental one (only those have per-snapshot state to drop); the
    vacuum is skipped, not failed, for a lake of full runs or one not run yet."""
    from jobs.lake.snapshot_views import is_incremental

    lake = _absolute(params["lake"])
    found = is_incremental(lake)
    print(f"{lake}: {'an incremental lake' if found else 'not an incremental lake: nothing to vacuum'}")
    return found


with DAG(
    dag_id=VACUUM_DAG_ID,
    description="offsetlake vacuum: drop the per-snapshot state of old snapshots, keep history",
    schedule=VACUUM.get("schedule", "@daily"),
    **DAG_SETTINGS,
    params={
        "lake": Param(str(SETTINGS.get("lake", "./lake")), type="string"),
        "keep": Param(int(VACUUM.get("keep", 168)), type="integer", minimum=1,
                      description="keep the per-snapshot state of the newest N snapshots"),
        "retain_hours": Param(float(VACUUM.get("retain_hours", 168)), type="number", minimum=0,
                              description="then Delta VACUUM of files older than this"),
    },
) as vacuum_dag:
    # The lake's write lock keeps it apart from a run of the main DAG: a vacuum that finds the
    # lake busy fails (exit 7) and takes its retries.
    vacuum = spark_job("vacuum", "vacuum.py",
                       ["--lake", "{{ params.lake }}", "--keep", "{{ params.keep }}",
                        "--retain-hours", "{{ params.retain_hours }}"],
                       conf={str(k): str(v) for k, v in (SETTINGS.get("spark_conf") or {}).items()})
    incremental_lake() >> vacuum
