"""Inputs that cannot be read get one plain line and their own exit code, from every command,
before any Spark session starts; the codes are documented in each command's --help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jobs import cli
from jobs.commands.inputs import (EXIT_CODES_HELP, EXIT_EMPTY, EXIT_NO_PATH, EXIT_NO_SEGMENTS,
                                  storage_error)

PROJECT = Path(__file__).resolve().parents[1]
SNAPSHOT_COMMANDS = ["dump", "ingest", "run"]


def _inputs(tmp_path: Path) -> dict[str, tuple[Path, int, str]]:
    empty = tmp_path / "empty"
    empty.mkdir()
    no_log = tmp_path / "no-log" / "__consumer_offsets-0"
    no_log.mkdir(parents=True)
    (no_log / "00000000000000000000.index").write_bytes(b"\0" * 8)
    (no_log / "leader-epoch-checkpoint").write_text("0\n0\n")
    return {
        "missing": (tmp_path / "nowhere", EXIT_NO_PATH, "no such file or directory"),
        "empty": (empty, EXIT_EMPTY, "empty directory, nothing to read"),
        "no_log": (no_log.parent, EXIT_NO_SEGMENTS,
                   "no __consumer_offsets segment files (*.log) in it"),
    }


@pytest.mark.parametrize("case", ["missing", "empty", "no_log"])
@pytest.mark.parametrize("command", SNAPSHOT_COMMANDS)
def test_unreadable_input_is_one_line_and_its_own_exit_code(tmp_path, capsys, command, case):
    path, code, words = _inputs(tmp_path)[case]
    args = [command, str(path)] + ([] if command == "dump" else ["--lake", str(tmp_path / "lake")])
    assert cli.main(args) == code
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"offsetlake {command}: {path}: {words}\n"
    assert not (tmp_path / "lake").exists()      # refused before touching the lake


def test_demo_with_a_missing_sample_and_sql_on_a_missing_or_empty_lake(tmp_path, capsys):
    assert cli.main(["demo", "--sample", str(tmp_path / "gone"), "--lake", str(tmp_path)]) == EXIT_NO_PATH
    assert cli.main(["sql", "select 1", "--lake", str(tmp_path / "gone")]) == EXIT_NO_PATH
    (tmp_path / "lake").mkdir()
    assert cli.main(["sql", "select 1", "--lake", str(tmp_path / "lake")]) == EXIT_EMPTY
    (tmp_path / "lake" / "notes.txt").write_text("not a table")
    assert cli.main(["sql", "select 1", "--lake", str(tmp_path / "lake")]) == EXIT_NO_SEGMENTS
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4 and all(line.startswith("offsetlake ") for line in lines)


@pytest.mark.parametrize("command", ["dump", "ingest", "run", "sql", "demo"])
def test_exit_codes_are_in_every_commands_help(command):
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", command, "--help"], cwd=PROJECT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and EXIT_CODES_HELP in proc.stdout


def test_storage_refusals_are_recognised_through_causes_and_jvm_messages():
    try:
        try:
            raise OSError(28, "No space left on device")
        except OSError as inner:
            raise RuntimeError("job aborted") from inner
    except RuntimeError as outer:
        assert storage_error(outer) == "No space left on device"
    jvm = RuntimeError("An error occurred while calling o123.save.\n: java.io.IOException: "
                       "No space left on device\n\tat java.base/...")
    assert storage_error(jvm) == "No space left on device"
    assert storage_error(ValueError("bad record")) is None


@pytest.mark.parametrize("command", ["quality", "report"])
def test_a_lake_without_tables_is_nothing_to_read(command, tmp_path, capsys):
    from jobs.cli import main

    assert main([command, "--lake", str(tmp_path)]) == 5
    assert capsys.readouterr().err.startswith(f"offsetlake {command}: no Delta tables")
