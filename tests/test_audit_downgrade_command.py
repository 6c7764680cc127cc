"""``offsetlake audit --target-version`` end to end on the bundled 4.3.1 sample (real Spark and
Delta): the verdicts are printed, ``downgrade_findings`` is written with its contract, the gate
sees its BREAK rows, and the ``downgrade_readiness`` view reads the real table."""

from __future__ import annotations

import contextlib
import io
import shutil

import pytest

from jobs.cli import main as offsetlake
from jobs.lake import read_snapshot
from jobs.lake.downgrade import DOWNGRADE_FINDINGS, DOWNGRADE_FINDINGS_COLUMNS
from jobs.lake.views import register_lake
from support.lake_fixture import sample_lake


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    copy = tmp_path_factory.mktemp("downgrade-audit") / "lake"
    shutil.copytree(sample_lake(spark, tmp_path_factory), copy)
    return copy


@pytest.fixture(scope="module")
def audited(lake):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = offsetlake(["audit", "--lake", str(lake), "--target-version", "3.9",
                           "--target-version", "4.0", "--target-version", "4.2",
                           "--fail-on", "critical", "--rule", "CG-01"])
    return code, out.getvalue()


def test_break_on_4_0_fails_the_critical_gate_and_verdicts_are_printed(audited):
    code, out = audited
    headlines = [line for line in out.splitlines() if line.startswith("safe to downgrade to")]
    assert code == 3
    assert [line.split(":")[0] for line in headlines] == [
        "safe to downgrade to 3.9", "safe to downgrade to 4.0", "safe to downgrade to 4.2"]
    assert headlines[1].startswith("safe to downgrade to 4.0: no - partition 0 ")
    assert headlines[2].startswith("safe to downgrade to 4.2: yes")


def test_the_table_holds_the_4_0_break_with_its_evidence(spark, lake, audited):
    table = read_snapshot(spark, lake, DOWNGRADE_FINDINGS, "kafka-4.3.1")
    assert table.columns == [name for name, _, _ in DOWNGRADE_FINDINGS_COLUMNS]
    breaks = [(r.target_version, r.partition, r.group_id, r.rule_id, r.failure_mode, r.first_offset)
              for r in table.where("class = 'BREAK'").collect()]
    assert breaks == [("4.0", 0, "wl-share", "DU-3", "fail-closed", 1)]


def test_the_readiness_view_reads_the_real_table(spark, lake, audited):
    own = spark.newSession()  # temporary views are per session: leave the shared one's alone
    register_lake(own, lake, "kafka-4.3.1")
    got = {r.target_version: (r.is_ready, r.worst_class) for r in own.sql(
        "select target_version, is_ready, worst_class from downgrade_readiness").collect()}
    assert got == {"3.9": (False, "DROP"), "4.0": (False, "BREAK"), "4.2": (True, "OK")}
