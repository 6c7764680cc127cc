"""Regression cases of the differential suite: minimal logs on which a release's real coordinator
and the audit once disagreed, each saved with the release's answer as its expectation.

``make_case`` shrinks a generated log while a *mutated* release profile (the audit as it was
before a fix, e.g. ``replace(RELEASES["3.8.1"], release=(3, 7, 9))`` for the marker rule of
3.7) still disagrees with the oracle, then stores the oracle's verdict for the smallest log:

    make_case(oracle, RELEASES["3.8.1"], old_profile, seed=17, partition=43, name="3.8-markers")

``tests/differential/test_differential.py`` replays every saved case through the audit, no JVM.
"""

from __future__ import annotations

import json
from pathlib import Path

from differential.harness import differences, model_verdict, oracle_verdict, partition_dirs
from support.loggen import generate
from support.loggen.shrink import load_case, save_case, shrink

CASES = Path(__file__).resolve().parent / "cases"


def _jsonable(verdict: dict) -> dict:
    out = dict(verdict)
    out.pop("why", None)
    if out["offsets"] is not None:
        out["offsets"] = sorted([*key, offset] for key, offset in out["offsets"].items())
    if out["skipped"] is not None:
        out["skipped"] = {str(t): n for t, n in sorted(out["skipped"].items())}
    return out


def comparable(verdict: dict) -> dict:
    """A verdict in the JSON shape a case stores (offsets as sorted lists, keys as strings)."""
    return json.loads(json.dumps(_jsonable(verdict)))


def make_case(oracle, release, mutated, *, seed: int, partition: int, name: str,
              scratch: Path) -> Path:
    counter = iter(range(10**9))

    def still_fails(log) -> bool:
        directory = scratch / f"{name}-{next(counter)}"
        log.write(directory)
        dirs = partition_dirs(directory)
        if partition not in dirs:
            return False
        answer = oracle.load(directory)
        part = next(p for p in answer["partitions"] if p["partition"] == partition)
        return bool(differences(model_verdict(dirs[partition], mutated), oracle_verdict(part)))

    small = shrink(generate(seed), still_fails)
    directory = scratch / f"{name}-final"
    small.write(directory)
    part = next(p for p in oracle.load(directory)["partitions"] if p["partition"] == partition)
    expectation = {"release": release.version, "partition": partition,
                   "verdict": comparable(oracle_verdict(part)),
                   "why": oracle_verdict(part)["why"]}
    return save_case(small, CASES / f"{name}.json", expectation)


def saved_cases() -> list[Path]:
    return sorted(CASES.glob("*.json"))


def load_saved(path: Path):
    return load_case(path)
