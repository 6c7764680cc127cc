"""The integration suite's Kafka Streams application (``streams/StreamsApp.java``): compiled with
``javac`` against Kafka Streams from Maven Central (``build/streams/fetch.sh``), one JVM per
instance, using the streams rebalance protocol (``group.protocol=streams``, KIP-1071).

    app = StreamsApp.compile(tmp_path, "4.3.1")
    one = app.start(bootstrap, "st-1", instance_id="st-1")   # a static member
    one.wait_for("RUNNING")
    one.kill()                                                # SIGKILL: no leave, fenced later

:func:`run_scenario` is the suite's scenario (one instance, then three; one killed, one
restarted; the group described by ``kafka-streams-groups`` at the snapshot), which
``test_streams_app.py`` checks and ``make_streams_sample.py`` bundles.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .kafka_broker import (JVM_OPTS, LOG4J2_TEMPLATE, PROJECT_ROOT, KafkaBroker, KafkaHarnessError,
                           java_executable, release_of, snapshot_log_dirs)
from .workloads import offsets_end_offsets

SOURCE = Path(__file__).resolve().parent / "streams" / "StreamsApp.java"
APPLICATION_ID = "st-app"
INPUT, OUTPUT = "st-input", "st-output"
FETCH_HINT = "bash build/streams/fetch.sh"


def streams_libs(version: str) -> Path:
    cache = Path(os.environ.get("OFFSETLAKE_CACHE", ".cache")).expanduser()
    if not cache.is_absolute():
        cache = PROJECT_ROOT / cache
    libs = cache / f"streams-{version}" / "libs"
    if not (libs / ".complete").is_file():
        raise KafkaHarnessError(f"Kafka Streams {version} jars not found in {libs}; run "
                                f"`{FETCH_HINT} {version}` first (make test does)")
    return libs


@dataclass
class Instance:
    """One running instance: its process, and the states it has printed."""

    name: str
    process: subprocess.Popen
    log: Path
    states: list[str] = field(default_factory=list)

    def _read(self) -> None:
        for line in self.process.stdout:
            if line.startswith("STATE "):
                self.states.append(line.split()[1])

    def wait_for(self, state: str, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while state not in self.states:
            if self.process.poll() is not None:
                raise KafkaHarnessError(f"{self.name} exited ({self.process.returncode}) before "
                                        f"{state}; log tail:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise KafkaHarnessError(f"{self.name} not {state} in {timeout_s:.0f} s "
                                        f"(states {self.states}); log tail:\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM: ``KafkaStreams.close`` (a dynamic member leaves; a static one stays in the
        group until its session times out, its member epoch -2)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)

    def kill(self) -> None:
        """SIGKILL: no leave at all; the coordinator fences the member after its session."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) \
            if self.log.exists() else ""


@dataclass
class StreamsApp:
    classes: Path
    libs: Path
    work: Path
    instances: list[Instance] = field(default_factory=list)

    @classmethod
    def compile(cls, work: Path, version: str) -> StreamsApp:
        java = java_executable()
        javac = Path(java).with_name("javac") if java else None
        if javac is None or not javac.exists():
            raise KafkaHarnessError("javac is not installed next to java (a JDK is needed)")
        libs = streams_libs(version)
        classes = work / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(javac), "-cp", f"{libs}/*", "-d", str(classes), str(SOURCE)],
                       check=True, capture_output=True, text=True, timeout=120)
        return cls(classes, libs, work)

    def start(self, bootstrap: str, name: str, *, instance_id: str | None = None) -> Instance:
        """A new instance with a state directory of its own (``name``); ``instance_id``: a
        static member (``group.instance.id``)."""
        log4j = self.work / "log4j2-streams.properties"
        if not log4j.exists():
            log4j.write_text(LOG4J2_TEMPLATE.format(target="SYSTEM_ERR", level="INFO"))
        state_dir = self.work / "state" / name
        state_dir.mkdir(parents=True, exist_ok=True)
        log = self.work / f"{name}-{len(self.instances)}.log"
        process = subprocess.Popen(
            [java_executable(), *JVM_OPTS, f"-Dlog4j2.configurationFile={log4j}", "-cp",
             f"{self.libs}/*:{self.classes}", "StreamsApp", bootstrap, APPLICATION_ID,
             str(state_dir), instance_id or "-"],
            stdout=subprocess.PIPE, stderr=log.open("w"), stdin=subprocess.DEVNULL, text=True)
        instance = Instance(name, process, log)
        threading.Thread(target=instance._read, daemon=True).start()
        self.instances.append(instance)
        return instance

    def close(self) -> None:
        for instance in self.instances:
            instance.kill()


# ---- the suite's scenario (test_streams_app.py, make_streams_sample.py) ----------------------

STREAMS_GROUP_COMMAND = "org.apache.kafka.tools.streams.StreamsGroupCommand"
# Group settings of the streams group (broker defaults, so no group config call is needed).
STREAMS_BROKER = {"group.streams.num.standby.replicas": "1",
                  "group.streams.session.timeout.ms": "6000",
                  "group.streams.min.session.timeout.ms": "1000",
                  "group.streams.heartbeat.interval.ms": "500",
                  "group.streams.min.heartbeat.interval.ms": "100",
                  "group.streams.initial.rebalance.delay.ms": "0"}
PARTITIONS = 4


def static_membership(release: str) -> bool:
    """4.3's Streams client refuses ``group.instance.id`` with the streams protocol."""
    return release_of(release) >= (4, 4)


@dataclass
class Described:
    """What ``kafka-streams-groups --describe`` printed (Kafka's Admin client)."""

    state: dict
    members: dict[str, dict]        # member id -> epoch, client id, tasks
    offsets: dict[tuple[str, int], int]


@dataclass
class StreamsRun:
    release: str
    broker: KafkaBroker
    segments: Path
    described: Described
    restarted: tuple[str, str, str] | None   # (instance id, old member id, new member id)
    attempts: int


def _tasks(text: str) -> dict[str, set[tuple[str, int]]]:
    """``ACTIVE: 0:[2,3]; 1:[2]; STANDBY: 1:[1,3]; ...`` -> {"ACTIVE": {("0", 2), ...}, ...}."""
    out: dict[str, set] = {}
    kind = None
    for token in re.findall(r"[A-Z-]+:|\d+:\[[\d,]*\]", text):
        if token.endswith(":") and not token[0].isdigit():
            kind = token[:-1]
            out.setdefault(kind, set())
            continue
        sub, parts = token.split(":", 1)
        out[kind] |= {(sub, int(p)) for p in parts.strip("[]").split(",") if p}
    return out


def describe(broker: KafkaBroker) -> Described:
    def run(*args: str) -> list[dict]:
        """The tool's rows as dicts by its header (the last column takes the rest of a line:
        ``ASSIGNMENTS`` holds spaces); the columns differ between releases."""
        lines = broker.run_tool(STREAMS_GROUP_COMMAND, "--bootstrap-server",
                                broker.bootstrap_server, "--describe", "--group",
                                APPLICATION_ID, *args).stdout.splitlines()
        header = next(line.split() for line in lines if line.startswith("GROUP "))
        return [dict(zip(header, line.split(None, len(header) - 1)))
                for line in lines if line.startswith(APPLICATION_ID + " ")]

    (state,) = run("--state", "--verbose")
    members = {row["MEMBER"]: {"member_epoch": int(row["MEMBER-EPOCH"]),
                               "process": row["PROCESS"], "client_id": row["CLIENT-ID"],
                               "tasks": _tasks(row["ASSIGNMENTS"])}
               for row in run("--members", "--verbose")}
    offsets = {(row["TOPIC"], int(row["PARTITION"])): int(row["CURRENT-OFFSET"])
               for row in run("--offsets", "--verbose")}
    return Described({"state": state["STATE"], "group_epoch": int(state["GROUP-EPOCH"]),
                      "target_assignment_epoch": int(state["TARGET-ASSIGNMENT-EPOCH"]),
                      "members": int(state["#MEMBERS"])}, members, offsets)


def _settled(broker: KafkaBroker, members: int, processed: int) -> Described:
    """Wait until the group is Stable with ``members`` members at the target epoch and has
    committed every input record."""
    deadline = time.monotonic() + 90
    while True:
        d = describe(broker)
        inputs = sum(o for (topic, _), o in d.offsets.items() if topic == INPUT)
        if (d.state["state"] == "Stable" and d.state["members"] == members == len(d.members)
                and all(m["member_epoch"] == d.state["target_assignment_epoch"]
                        for m in d.members.values()) and inputs == processed):
            return d
        if time.monotonic() > deadline:
            raise KafkaHarnessError(f"the streams group did not settle: {d}")
        time.sleep(1)


def run_scenario(broker: KafkaBroker, app: StreamsApp, release: str, tmp_path_factory) -> StreamsRun:
    """The scenario of ``tests/integration/test_streams_app.py`` on a running broker of
    ``release`` (started with :data:`STREAMS_BROKER`); ``tmp_path_factory``: anything with
    ``mktemp(name) -> Path``."""
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    bootstrap = broker.bootstrap_server
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(INPUT, PARTITIONS, 1), NewTopic(OUTPUT, PARTITIONS, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = 0

    def produce(n: int) -> None:
        nonlocal sent
        for i in range(sent, sent + n):
            producer.send(INPUT, key=b"k%d" % i, value=b"v%d" % (i % 7), partition=i % PARTITIONS)
        producer.flush()
        sent += n

    static = static_membership(release)
    produce(40)
    one = app.start(bootstrap, "one", instance_id="one" if static else None)
    one.wait_for("RUNNING")
    produce(40)
    two = app.start(bootstrap, "two", instance_id="two" if static else None)
    three = app.start(bootstrap, "three", instance_id="three" if static else None)
    two.wait_for("RUNNING")
    three.wait_for("RUNNING")
    before = _settled(broker, 3, sent)
    assert any(m["tasks"].get("STANDBY") for m in before.members.values()), before
    three.kill()
    old = {m["process"]: mid for mid, m in before.members.items()}
    two.stop()
    again = app.start(bootstrap, "two", instance_id="two" if static else None)
    again.wait_for("RUNNING")
    produce(40)
    _settled(broker, 2, sent)
    producer.close()
    for attempt in range(1, 4):
        segments = tmp_path_factory.mktemp(f"streams-{release}-{attempt}")
        end = offsets_end_offsets(bootstrap)
        snapshot_log_dirs(broker, segments)
        described = _settled(broker, 2, sent)
        if offsets_end_offsets(bootstrap) == end:
            break
    else:
        raise KafkaHarnessError("__consumer_offsets kept changing while the snapshot was taken")
    restarted = None
    if static:
        # The restarted instance keeps its state directory, so its process id: find it.
        (new_id,) = [mid for mid, m in described.members.items()
                     if m["process"] in old and old[m["process"]] != mid]
        restarted = ("two", old[described.members[new_id]["process"]], new_id)
    return StreamsRun(release, broker, segments, described, restarted, attempt)
