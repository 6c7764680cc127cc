"""Run every ``bench/bench_*.py`` script, one after another, and print its output.

Each script runs in its own interpreter (so pinning and warm caches do not leak between them);
the exit status is non-zero if any script failed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(BENCH_DIR.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        # Output streams straight through: long benchmarks show progress as they go.
        result = subprocess.run([sys.executable, str(script)], cwd=BENCH_DIR.parent)
        if result.returncode != 0:
            failed.append(script.name)
        print(flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
