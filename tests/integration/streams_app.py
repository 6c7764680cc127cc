"""The integration suite's Kafka Streams application (``streams/StreamsApp.java``): compiled with
``javac`` against Kafka Streams from Maven Central (``build/streams/fetch.sh``), one JVM per
instance, using the streams rebalance protocol (``group.protocol=streams``, KIP-1071).

    app = StreamsApp.compile(tmp_path, "4.3.1")
    one = app.start(bootstrap, "st-1", instance_id="st-1")   # a static member
    one.wait_for("RUNNING")
    one.kill()                                                # SIGKILL: no leave, fenced later
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .kafka_broker import JVM_OPTS, LOG4J2_TEMPLATE, PROJECT_ROOT, KafkaHarnessError, java_executable

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
