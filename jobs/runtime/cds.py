"""A class-data-sharing archive for local runs: the JVM maps the classes a run loads from one file
instead of finding, parsing and verifying them in Spark's jars again (about 4 s of a small run,
1-8 s of a 2M-record one).

``make setup`` builds it (``python -m jobs.runtime.cds``) by running ``offsetlake run`` on the
bundled sample with ``-XX:ArchiveClassesAtExit``; every local driver JVM then starts with
``-XX:SharedArchiveFile`` (``jobs.runtime.session``; a JVM spark-submit starts does not). Classes
the sample run did not load (a larger run's) are loaded from the jars as usual. The file is named
after the PySpark version and the ``java`` that wrote it, so an upgrade of either never reuses it;
the JVM also checks its class path against it, and an archive that does not fit (or is damaged) is
ignored silently: the run is only as slow as without one. Nothing else depends on it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jobs.runtime.config import PROJECT_ROOT, Config, load_config

SAMPLE = PROJECT_ROOT / "samples" / "kafka-4.3.1"
# The JVM's own messages about the archive (a mismatch, classes it skips) are not a run's business.
QUIET = "-Xlog:cds=off,cds+dynamic=off"


def java_binary() -> str:
    """The ``java`` PySpark starts: ``$JAVA_HOME/bin/java``, else the first on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java") or "java"
    return os.path.realpath(found)


def archive_path(cfg: Config) -> Path | None:
    """Where the archive for this PySpark and this ``java`` lives (``None``: archives are off)."""
    if cfg.spark.class_archive_dir is None:
        return None
    from pyspark.version import __version__

    key = hashlib.sha256(f"{__version__}\0{java_binary()}".encode()).hexdigest()[:12]
    return cfg.spark.class_archive_dir / f"spark-{__version__}-{key}.jsa"


def java_options(cfg: Config) -> str:
    """The options that make a JVM use the archive, or ``""`` when there is none."""
    path = archive_path(cfg)
    if path is None or not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}"


def _jvm_alive(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def build(cfg: Config, timeout: float = 600) -> Path:
    """Run the sample once with ``-XX:ArchiveClassesAtExit`` and put the archive in place."""
    path = archive_path(cfg)
    if path is None:
        raise RuntimeError("spark.class_archive_dir is empty: class archives are off")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + f".{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    options = f"{cfg.spark.short_run_java_options} -XX:ArchiveClassesAtExit={partial} {QUIET}"
    env = dict(os.environ, OFFSETLAKE_SPARK__SHORT_RUN_JAVA_OPTIONS=options.strip(),
               OFFSETLAKE_SPARK__CLASS_ARCHIVE_DIR="")
    with tempfile.TemporaryDirectory(prefix="offsetlake-cds-") as lake:
        done = subprocess.run([sys.executable, "-m", "jobs.cli", "run", str(SAMPLE), "--lake", lake,
                               "--snapshot-id", "cds"], cwd=PROJECT_ROOT, env=env, timeout=timeout,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the sample run failed (exit {done.returncode}): "
                               f"{done.stderr.strip()[-500:]}")
        # The JVM writes the archive as it exits, after the Python side has gone.
        deadline = time.monotonic() + 120
        while _jvm_alive(str(partial)) and time.monotonic() < deadline:
            time.sleep(0.2)
    if not partial.is_file() or _jvm_alive(str(partial)):
        raise RuntimeError(f"the JVM wrote no class archive at {partial}")
    os.replace(partial, path)
    return path


def main() -> int:
    cfg = load_config()
    try:
        path = build(cfg)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"class archive not built ({exc}); runs start without one", file=sys.stderr)
        return 1
    print(f"class archive for local runs: {path} ({path.stat().st_size >> 20} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
