"""Run generated logs through every release's real coordinator and through the audit's model.

    .venv/bin/python tests/differential/run.py --logs 2000 [--first-seed 0] [--release 4.0.2]

writes each log once, loads it in one JVM per release (:class:`oracle.runner.Oracle`), compares
partition by partition (:func:`differential.harness.differences`) and prints a count per release.
``--save DIR`` shrinks each disagreement to a minimal log (``support.loggen.shrink``) and saves
it as a regression case whose expectation is the release's answer. The pytest module
``tests/differential/test_differential.py`` runs the same loop.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from differential.harness import audit_verdict, differences, oracle_verdict, partition_dirs  # noqa: E402
from support.partition_dirs import facts_from_partition_dir  # noqa: E402
from jobs.audits.java_releases import RELEASES  # noqa: E402
from oracle.runner import Oracle  # noqa: E402
from support.loggen import generate  # noqa: E402
from support.loggen.shrink import save_case, shrink  # noqa: E402


@dataclass(frozen=True)
class Disagreement:
    release: str
    seed: int
    partition: int
    differences: tuple[str, ...]


def write_logs(seeds, root: Path) -> dict[int, Path]:
    """Each seed's log written once under ``root/<seed>``."""
    out = {}
    for seed in seeds:
        directory = root / str(seed)
        generate(seed).write(directory)
        out[seed] = directory
    return out


def compare(oracle: Oracle, release: str, seed: int, directory: Path,
            stats: Counter | None = None, facts: dict | None = None) -> list[Disagreement]:
    """The release's and the audit's verdicts on each partition of one log. ``facts``: a cache of
    each partition directory's decoded facts, kept across releases (decoding a log is the same
    for every release; only the audit of the facts is the release's)."""
    answer = oracle.load(directory)
    dirs = partition_dirs(directory)
    found = []
    for part in answer["partitions"]:
        if stats is not None:
            failure = part.get("failure")
            stats["partitions"] += 1
            stats["fails at " + failure["stage"] if failure else "loads"] += 1
            stats["skipped records"] += len(part.get("skipped") or ())
        directory_of = dirs[part["partition"]]
        known = None
        if facts is not None:
            known = facts.get(directory_of)
            if known is None:
                known = facts[directory_of] = facts_from_partition_dir(directory_of)
        diff = differences(audit_verdict(directory_of, RELEASES[release], known),
                           oracle_verdict(part))
        if diff:
            found.append(Disagreement(release, seed, part["partition"], tuple(diff)))
    return found


def run(releases, logs: dict[int, Path], stats: Counter | None = None) -> list[Disagreement]:
    found, facts = [], {}
    for release in releases:
        with Oracle(release) as oracle:
            for seed, directory in logs.items():
                found += compare(oracle, release, seed, directory, stats, facts)
    return found


def soak(seeds, scratch: Path, releases, show: int = 20) -> tuple[Counter, Counter]:
    """Every seed's log against every release at once: one JVM per release working while the
    audit judges the same log (a log is written, asked about and deleted before the next)."""
    found, stats = Counter(), Counter()
    oracles = {r: Oracle(r) for r in releases}
    try:
        for oracle in oracles.values():
            oracle.start()
        for n, seed in enumerate(seeds, 1):
            directory = scratch / str(seed)
            generate(seed).write(directory)
            for oracle in oracles.values():
                oracle.submit(directory)
            dirs = partition_dirs(directory)
            facts = {p: facts_from_partition_dir(d) for p, d in dirs.items()}
            for release, oracle in oracles.items():
                for part in oracle.answer()["partitions"]:
                    p = part["partition"]
                    stats[release, "loads" if part.get("failure") is None else "fails"] += 1
                    diff = differences(audit_verdict(dirs[p], RELEASES[release], facts[p]),
                                       oracle_verdict(part))
                    if diff:
                        found[release] += 1
                        if sum(found.values()) <= show:
                            print(f"  {release} seed {seed} partition {p}: " + "; ".join(diff), flush=True)
            shutil.rmtree(directory)
            if n % 5000 == 0:
                print(f"{n} logs: {sum(found.values())} disagreement(s)", flush=True)
    finally:
        for oracle in oracles.values():
            oracle.close()
    return found, stats


def shrink_and_save(oracle: Oracle, d: Disagreement, cases: Path, scratch: Path) -> Path:
    """The smallest log on which ``d.release`` and the model still disagree, saved with the
    release's verdict as its expectation."""
    counter = iter(range(10**9))

    def still_fails(log) -> bool:
        directory = scratch / f"shrink-{next(counter)}"
        log.write(directory)
        return any(x.partition == d.partition for x in compare(oracle, d.release, d.seed, directory))

    small = shrink(generate(d.seed), still_fails)
    directory = scratch / "final"
    small.write(directory)
    part = next(p for p in oracle.load(directory)["partitions"] if p["partition"] == d.partition)
    expectation = {"release": d.release, "partition": d.partition,
                   **{k: v for k, v in oracle_verdict(part).items() if k != "offsets"},
                   "offsets": sorted([*k, v] for k, v in (oracle_verdict(part)["offsets"] or {}).items())}
    return save_case(small, cases / f"{d.release}-seed{d.seed}-p{d.partition}.json", expectation)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--logs", type=int, default=2000, help="number of generated logs (default 2000)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--release", action="append", help="only these releases (repeatable)")
    parser.add_argument("--save", metavar="DIR", help="shrink disagreements and save them as cases in DIR")
    parser.add_argument("--show", type=int, default=20, help="disagreements to print (default 20)")
    parser.add_argument("--soak", action="store_true",
                        help="stream: every release at once, each log deleted once judged (for 100,000 logs)")
    args = parser.parse_args(argv)
    releases = args.release or list(RELEASES)
    started = time.monotonic()
    if args.soak:
        with tempfile.TemporaryDirectory(prefix="offsetlake-soak-") as tmp:
            found, stats = soak(range(args.first_seed, args.first_seed + args.logs), Path(tmp),
                                releases, args.show)
        for release in releases:
            print(f"{release}: {found[release]} disagreement(s); partitions loading "
                  f"{stats[release, 'loads']}, failing {stats[release, 'fails']}")
        print(f"total: {sum(found.values())} disagreement(s) over {args.logs} logs x "
              f"{len(releases)} releases, {time.monotonic() - started:.0f} s")
        return 1 if sum(found.values()) else 0
    with tempfile.TemporaryDirectory(prefix="offsetlake-diff-") as tmp:
        logs = write_logs(range(args.first_seed, args.first_seed + args.logs), Path(tmp))
        print(f"{len(logs)} logs written in {time.monotonic() - started:.1f} s", flush=True)
        total = 0
        for release in releases:
            t0 = time.monotonic()
            stats = Counter()
            found = run([release], logs, stats)
            total += len(found)
            print(f"{release}: {len(found)} disagreement(s) over {len(logs)} logs "
                  f"({time.monotonic() - t0:.1f} s); " + ", ".join(f"{k} {v}" for k, v in sorted(stats.items())),
                  flush=True)
            for d in found[:args.show]:
                print(f"  seed {d.seed} partition {d.partition}: " + "; ".join(d.differences), flush=True)
            if args.save and found:
                with Oracle(release) as oracle:
                    seen = set()
                    for d in found:
                        if d.seed in seen:
                            continue
                        seen.add(d.seed)
                        print("  saved", shrink_and_save(oracle, d, Path(args.save), Path(tmp)), flush=True)
    print(f"total: {total} disagreement(s), {time.monotonic() - started:.1f} s")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
