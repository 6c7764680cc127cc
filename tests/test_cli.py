"""The CLI teaches: --help lists every planned command, unbuilt ones exit 2 and say so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


from jobs.cli import COMMANDS, main

PLANNED = ["dump", "capture", "ingest", "run", "audit", "sql", "quality", "report"]


def _offsetlake_exe() -> list[str]:
    exe = Path(sys.executable).with_name("offsetlake")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("offsetlake")
    return [found] if found else [sys.executable, "-m", "jobs.cli"]


def test_help_lists_every_planned_command():
    out = subprocess.run(_offsetlake_exe() + ["--help"], capture_output=True, text=True,
                         check=True).stdout
    listed = [line.split()[0] for line in out.splitlines()
              if line.startswith("    ") and line.split()]
    for name in PLANNED:
        assert name in listed, f"{name} missing from --help:\n{out}"
    assert "__consumer_offsets" in out


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "commands" in capsys.readouterr().err


def test_every_command_has_its_own_help():
    for command in COMMANDS:
        proc = subprocess.run(_offsetlake_exe() + [command.name, "--help"],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert command.example in proc.stdout


def test_help_imports_no_spark_numpy_or_decoders():
    """``offsetlake --help`` and every ``COMMAND --help`` build their parser from cheap modules only:
    heavy imports belong inside each command's ``run`` (the parser answered in ~2 s before)."""
    probe = ("import sys, jobs.cli\n"
             "jobs.cli.build_parser()\n"
             "heavy = ('pyspark', 'numpy', 'pyarrow', 'pandas', 'decoders', 'kafka', 'delta')\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
