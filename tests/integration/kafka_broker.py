"""A real single-node Apache Kafka (KRaft, broker + controller in one JVM) for integration tests.

The broker runs from the jars ``build/kafka/fetch.sh`` copies out of Maven Central into
``${OFFSETLAKE_CACHE:-.cache}/kafka-<version>/libs`` — no distribution tarball, no scripts::

    with KafkaBroker(tmp_path) as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_server)
        ...
        out = broker.run_tool(DUMP_LOG_SEGMENTS, "--offsets-decoder", "--files", str(segment))

It listens on 127.0.0.1 only, on free ports, keeps every file (config, data, logs) under its work
directory, and is always stopped (SIGTERM, then SIGKILL) on leaving the ``with`` block. The log cleaner
is off and every message is flushed, so the ``__consumer_offsets`` segments on disk hold the complete
history and can be copied as a snapshot (:func:`snapshot_log_dirs`) while the broker runs.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
POM = PROJECT_ROOT / "build" / "kafka" / "pom.xml"
FETCH_HINT = "bash build/kafka/fetch.sh"

KAFKA_MAIN = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"
OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_PARTITIONS = 3

# Which group types the coordinator accepts. Since 4.x these are feature levels fixed when the
# storage is formatted (`group.coordinator.rebalance.protocols` is deprecated); set explicitly so a
# change of Kafka's defaults does not silently drop share or streams groups from the tests.
FEATURES = ("group.version=1", "share.version=1", "streams.version=1", "transaction.version=2")

# Segment files and the small files Kafka keeps beside them (wire-format.md e.3); a snapshot takes
# these and nothing else (no lock files, no checkpoints of other topics).
SNAPSHOT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
SNAPSHOT_NAMES = ("leader-epoch-checkpoint", "partition.metadata")

JVM_OPTS = ("-Xms256m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true")

LOG4J2_TEMPLATE = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = {target}
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.out.ref = out
logger.state.name = state.change.logger
logger.state.level = WARN
"""

# Kafka 3.x logs through reload4j (Log4j 1) when its SLF4J binding wins: the same settings.
LOG4J1_TEMPLATE = """\
log4j.rootLogger={level}, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.Target={target}
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
"""


class KafkaHarnessError(RuntimeError):
    """The test broker could not be set up, started or used."""


class KafkaJarsMissing(KafkaHarnessError):
    """The Kafka jars have not been fetched into the cache."""


def kafka_version() -> str:
    """The Kafka version pinned in ``build/kafka/pom.xml``."""
    match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", POM.read_text())
    if match is None:
        raise KafkaHarnessError(f"no <kafka.version> in {POM}")
    return match.group(1)


def downgrade_versions() -> tuple[str, ...]:
    """The older brokers pinned in ``build/kafka/pom.xml`` (``<downgrade.versions>``)."""
    match = re.search(r"<downgrade\.versions>([^<]+)</downgrade\.versions>", POM.read_text())
    return tuple(match.group(1).split()) if match else ()


def writer_versions() -> tuple[str, ...]:
    """Newer brokers whose snapshots the downgrade comparison loads (``<writer.versions>``)."""
    match = re.search(r"<writer\.versions>([^<]+)</writer\.versions>", POM.read_text())
    return tuple(match.group(1).split()) if match else ()


def kafka_libs_dir(version: str | None = None) -> Path:
    """Where fetch.sh puts the jars of ``version`` (default: the pinned one); raises
    :class:`KafkaJarsMissing` when the fetch is incomplete."""
    version = version or kafka_version()
    cache = Path(os.environ.get("OFFSETLAKE_CACHE", ".cache")).expanduser()
    if not cache.is_absolute():
        cache = PROJECT_ROOT / cache
    libs = cache / f"kafka-{version}" / "libs"
    if not (libs / ".complete").is_file():
        hint = FETCH_HINT + ("" if version == kafka_version() else f" {version}")
        raise KafkaJarsMissing(f"Kafka {version} jars not found in {libs}; "
                               f"run `{hint}` first (the Makefile does before the tests)")
    return libs


def release_of(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".")[:3])


def features_for(version: str) -> tuple[str, ...]:
    """Feature levels to format an older broker's storage with: the suite's own where that
    release knows them (3.9 knows none of them: its KIP-848 coordinator is a config, see
    :data:`NEW_COORDINATOR_3X`)."""
    release = release_of(version)
    if release < (4, 0):
        return ()
    if release < (4, 1):
        return ("group.version=1", "transaction.version=2")
    return FEATURES


# 3.x: the Java group coordinator is opt-in (KafkaConfig.isNewGroupCoordinatorEnabled).
NEW_COORDINATOR_3X = {"group.coordinator.new.enable": "true",
                      "group.coordinator.rebalance.protocols": "classic,consumer"}


def java_executable() -> str | None:
    """``$JAVA_HOME/bin/java`` if set, else ``java`` on the PATH, else None."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def random_cluster_id() -> str:
    """A cluster id as Kafka's ``Uuid.randomUuid().toString()`` makes it (never starting with '-')."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def broker_properties(data_dir: Path, port: int, controller_port: int) -> dict[str, str]:
    """server.properties for a fast, single-node, history-keeping KRaft broker."""
    return {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": "1",
        "auto.create.topics.enable": "false",
        "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS),
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.num.partitions": "2",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "1000",
        "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.session.timeout.ms": "6000",
        "group.consumer.min.heartbeat.interval.ms": "100",
        "group.consumer.heartbeat.interval.ms": "500",
        # The smallest segments Kafka 4.x accepts (1 MiB); no cleaner so nothing is compacted
        # away; flush every message so the files on disk are complete at any time.
        "log.segment.bytes": str(1024 * 1024),
        "offsets.topic.segment.bytes": str(1024 * 1024),
        "log.cleaner.enable": "false",
        "log.flush.interval.messages": "1",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "group.coordinator.threads": "1",
        "share.coordinator.threads": "1",
        "log.retention.check.interval.ms": "3600000",
    }


class KafkaBroker:
    """A Kafka broker process in ``work_dir``: use as a context manager, or start()/stop()."""

    def __init__(self, work_dir: str | os.PathLike, *, libs: Path | None = None,
                 overrides: dict[str, str] | None = None, startup_timeout_s: float = 90.0,
                 version: str | None = None):
        """``version``: an older release fetched by ``fetch.sh VERSION`` (jars and feature
        levels follow it); default the pinned one."""
        self.java = java_executable()
        if self.java is None:
            raise KafkaHarnessError("java is not installed (neither $JAVA_HOME/bin/java nor PATH)")
        self.version = version or kafka_version()
        self.features = FEATURES if version is None else features_for(version)
        self.libs = libs or kafka_libs_dir(version)
        self.work_dir = Path(work_dir)
        self.data_dir = self.work_dir / "data"
        self.port = free_port()
        self.controller_port = free_port()
        self.cluster_id = random_cluster_id()
        self.properties = broker_properties(self.data_dir, self.port, self.controller_port)
        self.properties.update(overrides or {})
        self.startup_timeout_s = startup_timeout_s
        self.server_log = self.work_dir / "server.log"
        self._process: subprocess.Popen | None = None

    @property
    def bootstrap_server(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self, format_storage: bool = True) -> None:
        """Format the storage (unless restarting on formatted storage), launch the JVM and wait
        until the broker answers metadata requests. The log is appended to across restarts."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        config = self.work_dir / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in self.properties.items()))
        (self.work_dir / "log4j2.properties").write_text(
            LOG4J2_TEMPLATE.format(target="SYSTEM_OUT", level="INFO"))
        if format_storage:
            features = [arg for feature in self.features for arg in ("--feature", feature)]
            self.run_tool(STORAGE_TOOL, "format", "-t", self.cluster_id, "-c", str(config),
                          *features, log_name="format.log")
        log = self.server_log.open("ab")
        try:
            self._process = subprocess.Popen(
                self._java_command(KAFKA_MAIN, str(config), log4j=self.work_dir / "log4j2.properties"),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.work_dir, start_new_session=True)
        finally:
            log.close()
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (controlled shutdown), then SIGKILL after ``timeout_s``. Safe to call twice."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id (the leader of its own process group) while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def run_tool(self, main_class: str, *args: str, timeout_s: float = 120.0,
                 log_name: str | None = None) -> subprocess.CompletedProcess:
        """Run one of Kafka's command-line tools from the same jars; raise with its output on failure.

        Tool logging goes to stderr at WARN, so stdout is the tool's own output.
        """
        log4j = self.work_dir / "log4j2-tools.properties"
        if not log4j.exists():
            self.work_dir.mkdir(parents=True, exist_ok=True)
            log4j.write_text(LOG4J2_TEMPLATE.format(target="SYSTEM_ERR", level="WARN"))
        result = subprocess.run(self._java_command(main_class, *args, log4j=log4j),
                                capture_output=True, text=True, timeout=timeout_s,
                                stdin=subprocess.DEVNULL, cwd=self.work_dir)
        if log_name:
            (self.work_dir / log_name).write_text(result.stdout + result.stderr)
        if result.returncode != 0:
            raise KafkaHarnessError(f"{main_class} {' '.join(args)} exited {result.returncode}:\n"
                                    f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def partition_dirs(self, topic: str = OFFSETS_TOPIC) -> list[Path]:
        """The broker's directories of ``topic``, by partition number."""
        dirs = [d for d in self.data_dir.glob(f"{topic}-*") if d.name.rsplit("-", 1)[1].isdigit()]
        return sorted(dirs, key=lambda d: int(d.name.rsplit("-", 1)[1]))

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the broker's log, to print when something failed."""
        if not self.server_log.exists():
            return "(no broker log yet)"
        text = self.server_log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def _java_command(self, main_class: str, *args: str, log4j: Path) -> list[str]:
        text = log4j.read_text()
        level = re.search(r"rootLogger.level = (\w+)", text).group(1)
        target = "System.err" if "SYSTEM_ERR" in text else "System.out"
        log4j1 = log4j.with_suffix(".log4j1.properties")
        log4j1.write_text(LOG4J1_TEMPLATE.format(level=level, target=target))
        return [self.java, *JVM_OPTS, f"-Dlog4j2.configurationFile={log4j}",
                f"-Dlog4j.configuration=file:{log4j1}", "-cp", f"{self.libs}/*", main_class, *args]

    def _wait_until_ready(self) -> None:
        from kafka import KafkaAdminClient  # kafka-python; imported here so the module loads without it

        deadline = time.monotonic() + self.startup_timeout_s
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                raise KafkaHarnessError(f"Kafka exited during startup; log tail:\n{self.log_tail()}")
            try:
                admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_server,
                                         bootstrap_timeout_ms=2000, request_timeout_ms=5000)
                try:
                    if admin.describe_cluster().get("brokers"):
                        return
                finally:
                    admin.close()
            except Exception as exc:  # not up yet: connection refused, timeout, no brokers
                last_error = exc
            time.sleep(0.5)
        raise KafkaHarnessError(f"Kafka did not become ready within {self.startup_timeout_s} s "
                                f"({last_error!r}); log tail:\n{self.log_tail()}")


def snapshot_log_dirs(broker: KafkaBroker, dest: str | os.PathLike,
                      topic: str = OFFSETS_TOPIC) -> list[Path]:
    """Copy ``topic``'s partition directories (segments and their side files only) into ``dest``.

    Safe while the broker runs: segments are append-only and every message is flushed
    (``log.flush.interval.messages=1``), so the copy is a prefix of the log; a partially written
    last batch is possible in principle and is what a segment reader must tolerate anyway.
    """
    dest = Path(dest)
    copied = []
    for source in broker.partition_dirs(topic):
        target = dest / source.name
        target.mkdir(parents=True, exist_ok=True)
        for item in sorted(source.iterdir()):
            if item.is_file() and (item.suffix in SNAPSHOT_SUFFIXES or item.name in SNAPSHOT_NAMES):
                shutil.copy2(item, target / item.name)
        copied.append(target)
    return copied
