"""A lake on a full filesystem (a small tmpfs mounted for the test; needs root): the run fails with
one clear line and exit 6, the lake stays readable, and once space returns a rerun gives the
clean tables."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.faults.runs import assert_same_tables, lake_tables, rerun_here, run_cli
from tests.faults.snapshots import copy_sample

EXIT_LAKE_STORAGE = 6
SIZE_MB = 64


@pytest.fixture
def small_fs(tmp_path):
    mount = tmp_path / "fs"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount, leave_bytes: int):
    """A file taking all but ``leave_bytes`` of the filesystem."""
    stat = os.statvfs(mount)
    free = stat.f_bavail * stat.f_frsize
    filler = mount / "filler"
    with open(filler, "wb") as out:
        out.truncate(0)
        os.posix_fallocate(out.fileno(), 0, max(0, free - leave_bytes))
    return filler


def test_full_lake_fails_clearly_stays_readable_and_recovers(tmp_path, spark, clean, small_fs):
    snapshot = copy_sample(tmp_path)
    lake = small_fs / "lake"
    filler = _fill(small_fs, leave_bytes=256 * 1024)   # a clean sample lake needs more
    done = run_cli(snapshot, lake)
    assert done.returncode == EXIT_LAKE_STORAGE, (done.returncode, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("offsetlake run: cannot write the lake") and \
        "No space left on device" in lines[-1]
    assert "Traceback" not in done.stderr
    partial = lake_tables(spark, lake)          # whatever was committed reads back
    for table, rows in partial.items():
        assert rows in ([], clean[table]), f"{table} holds a partial snapshot"
    filler.unlink()
    again = rerun_here(snapshot, lake)
    assert again.returncode == 0, again.stderr[-3000:]
    assert_same_tables(lake_tables(spark, lake), clean)
