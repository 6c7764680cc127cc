"""The coordinator oracle: a release's real Java group coordinator replaying ``__consumer_offsets``.

``tests/oracle/java`` is a small Java program compiled here, per release, against that release's
jars from Maven Central (``build/oracle/fetch.sh``). It hands every record of a log, in log order,
to the release's own ``GroupCoordinatorShard`` the way the release's loader does, and answers with
one JSON line per log: per partition, loaded or failed (where and why), what the loader skipped,
and the groups and offsets the shard holds at the end::

    with Oracle("4.0.2") as oracle:                       # one JVM, many logs
        answer = oracle.load("samples/kafka-4.3.1")
    answer["partitions"][0]["failure"]["record_type"]     # 11

Sources compiled for a release: ``java/common`` and the directories of :data:`_SOURCES`
(kafka-clients' record package moved in 4.3; one adapter per family of releases whose shard
is driven alike; a setup per release where only its construction differs). Classes are cached
in ``${OFFSETLAKE_CACHE:-.cache}/oracle-<release>/classes-<hash of the sources>``.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
JAVA_SOURCES = Path(__file__).resolve().parent / "java"
FETCH = PROJECT_ROOT / "build" / "oracle" / "fetch.sh"
MAIN_CLASS = "offsetlake.oracle.OracleMain"

_SOURCES: dict[str, tuple[str, ...]] = {
    "3.6.2": ("segments/record", "adapters/v3_6"),
    "3.7.2": ("segments/record", "adapters/v3_7"),
    "3.8.1": ("segments/record", "adapters/v3_8", "setups/v3_8"),
    "3.9.2": ("segments/record", "adapters/v3_8", "setups/v3_9"),
    "4.0.2": ("segments/record", "adapters/v4_0", "setups/v4_0"),
    "4.1.2": ("segments/record", "adapters/v4_0", "setups/v4_1"),
    "4.2.1": ("segments/record", "adapters/v4_0", "setups/v4_2"),
    "4.3.1": ("segments/record_internal", "adapters/v4_0", "setups/v4_3"),
    "4.4.0": ("segments/record_internal", "adapters/v4_0", "setups/v4_4"),
}
RELEASES: tuple[str, ...] = tuple(_SOURCES)

# A short-lived JVM that only replays: the C1 compiler alone starts fastest, the class-data
# sharing archive of the JDK is used when present.
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xmx512m", "-XX:+UseSerialGC")
ANSWER_TIMEOUT_S = 300.0


class OracleError(RuntimeError):
    """The oracle could not answer: fetch or build failed, the JVM died or timed out, or it could
    not read the input. The message carries the JVM's (or the tool's) stderr."""


def cache_root() -> Path:
    cache = Path(os.environ.get("OFFSETLAKE_CACHE", ".cache")).expanduser()
    return cache if cache.is_absolute() else PROJECT_ROOT / cache


def release_dir(release: str) -> Path:
    if release not in _SOURCES:
        raise ValueError(f"unsupported release {release!r}; supported: {', '.join(RELEASES)}")
    return cache_root() / f"oracle-{release}"


def ensure_jars(release: str) -> Path:
    """The release's jar directory, fetched from Maven Central by fetch.sh when incomplete."""
    libs = release_dir(release) / "libs"
    if not (libs / ".complete").is_file():
        env = {**os.environ, "OFFSETLAKE_CACHE": str(cache_root())}
        done = subprocess.run(["bash", str(FETCH), release], env=env, capture_output=True, text=True)
        if done.returncode != 0 or not (libs / ".complete").is_file():
            raise OracleError(f"fetching the {release} jars failed ({FETCH} {release}):\n"
                              f"{done.stdout}\n{done.stderr}")
    return libs


def source_files(release: str) -> list[Path]:
    roots = [JAVA_SOURCES / "common", *(JAVA_SOURCES / d for d in _SOURCES[release])]
    return sorted(f for root in roots for f in root.rglob("*.java"))


def sources_hash(release: str) -> str:
    digest = hashlib.sha256(release.encode())
    for file in source_files(release):
        digest.update(str(file.relative_to(JAVA_SOURCES)).encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def ensure_oracle(release: str) -> str:
    """The classpath of the release's oracle: fetched and compiled when needed, cached after."""
    libs = ensure_jars(release)
    classes = release_dir(release) / f"classes-{sources_hash(release)}"
    if not (classes / ".complete").is_file():
        _compile(release, libs, classes)
    return os.pathsep.join([str(classes), str(libs / "*")])


def _compile(release: str, libs: Path, classes: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise OracleError("javac (JDK 17+) is not on PATH")
    # Compile into a scratch directory and move it into place complete, so an interrupted or
    # concurrent build never leaves classes that look finished.
    scratch = Path(tempfile.mkdtemp(prefix="classes.partial.", dir=classes.parent))
    try:
        command = [javac, "-nowarn", "-encoding", "UTF-8", "-d", str(scratch),
                   "-cp", str(libs / "*"), *map(str, source_files(release))]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise OracleError(f"compiling the {release} oracle failed:\n{done.stdout}{done.stderr}")
        (scratch / ".complete").touch()
        try:
            scratch.rename(classes)
        except OSError:
            if not (classes / ".complete").is_file():  # not another build finishing first
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class Oracle:
    """One JVM running one release's oracle; :meth:`load` asks it about one log at a time.

    Use as a context manager; the JVM stops on exit. An input the oracle cannot read raises
    :class:`OracleError` and leaves the JVM running for the next one.
    """

    def __init__(self, release: str, timeout: float = ANSWER_TIMEOUT_S):
        release_dir(release)  # validates
        self.release = release
        self.timeout = timeout
        self._process: subprocess.Popen | None = None
        self._stderr: Path | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._sent: collections.deque[tuple[str, int]] = collections.deque()

    def __enter__(self) -> Oracle:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        classpath = ensure_oracle(self.release)
        java = shutil.which("java")
        if java is None:
            raise OracleError("java (17+) is not on PATH")
        # stderr goes to a file, never a pipe nobody drains (a chatty JVM would block on it);
        # opened for appending so that reading it here never moves where the JVM writes.
        handle, name = tempfile.mkstemp(prefix=f"oracle-{self.release}-", suffix=".stderr")
        os.close(handle)
        self._stderr = Path(name)
        with open(self._stderr, "ab") as stderr:
            self._process = subprocess.Popen(
                [java, *JVM_FLAGS, "-cp", classpath, MAIN_CLASS, self.release],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        threading.Thread(target=self._read_answers, args=(self._process.stdout,), daemon=True).start()

    def _read_answers(self, stdout) -> None:
        for line in stdout:
            self._answers.put(line.decode("utf-8"))
        self._answers.put(None)

    def load(self, log_dir: str | os.PathLike) -> dict:
        """The oracle's answer for a snapshot root or one ``__consumer_offsets-N`` directory."""
        self.submit(log_dir)
        return self.answer()

    def submit(self, log_dir: str | os.PathLike) -> None:
        """Send one log without waiting: the JVM works while the caller does; :meth:`answer`
        returns the answers in the order the logs were sent."""
        if self._process is None:
            raise OracleError("the oracle is not started (use it as a context manager)")
        path = str(Path(log_dir).resolve())
        if "\n" in path:
            raise ValueError(f"a path with a newline cannot be sent to the oracle: {path!r}")
        since = self._stderr.stat().st_size    # errors quote what the JVM wrote for this input
        self._sent.append((path, since))
        try:
            self._process.stdin.write(path.encode("utf-8") + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise OracleError(f"the {self.release} oracle JVM is gone: {e}\n{self.stderr_text(since)}") from e

    def answer(self) -> dict:
        """The answer to the oldest log sent and not yet answered."""
        path, since = self._sent.popleft()
        try:
            line = self._answers.get(timeout=self.timeout)
        except queue.Empty:
            self._process.kill()
            raise OracleError(f"no answer from the {self.release} oracle within {self.timeout} s "
                              f"for {path}\n{self.stderr_text(since)}") from None
        if line is None:
            code = self._process.wait()
            raise OracleError(f"the {self.release} oracle JVM exited (code {code}) on {path}\n"
                              f"{self.stderr_text()}")
        answer = json.loads(line)
        if "error" in answer:
            raise OracleError(f"the {self.release} oracle could not read {path}: {answer['error']}\n"
                              f"{self.stderr_text(since)}")
        return answer

    def stderr_text(self, since: int = 0, limit: int = 20_000) -> str:
        """What the JVM wrote to stderr from byte ``since`` on (its last ``limit`` characters)."""
        if self._stderr is None:
            return ""
        return self._stderr.read_bytes()[since:].decode("utf-8", errors="replace")[-limit:]

    def close(self) -> None:
        if self._process is not None:
            try:
                self._process.stdin.close()
                self._process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
            self._process = None
        if self._stderr is not None:
            self._stderr.unlink(missing_ok=True)
            self._stderr = None


def run_oracle(release: str, dirs: list[str | os.PathLike]) -> list[dict]:
    """Answers for each of ``dirs``, in order, from one JVM of ``release``."""
    with Oracle(release) as oracle:
        return [oracle.load(d) for d in dirs]
