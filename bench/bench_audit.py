"""Single-process audit throughput: the pure per-group audit (:mod:`jobs.audits`) against the
replay it drives (:mod:`jobs.replay`), on one consumer group's log.

Log: 4 members join a group and share 32 partitions of one topic (KIP-848 records with
AssignmentEpochs, as 4.3 writes them), then ``--rounds`` rounds of offset commits for all 32
partitions (one batch per round), every ``--rebalance-every`` rounds a metadata change moves one
partition between members (revoke, converge, converge), so commits are correlated with a moving
ownership. Reported: events/s of ``replay_partition`` and of ``audit_partition``, best of 3.

Usage: ``python bench/bench_audit.py [--rounds N] [--rebalance-every K]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from jobs.audits.engine import audit_partition  # noqa: E402
from jobs.replay import replay_partition  # noqa: E402
from support.scenarios import Scenario  # noqa: E402

MEMBERS = "ABCD"


def build(rounds: int, rebalance_every: int) -> Scenario:
    s = Scenario("bench")
    for m in MEMBERS:
        s.consumer_join(m, ["foo"])
    owners = {p: MEMBERS[p // 8] for p in range(32)}

    def target():
        return {m: {"foo": sorted(p for p, o in owners.items() if o == m)} for m in MEMBERS}
    s.compute_target(target())
    for m in MEMBERS:
        s.converge(m)
    for r in range(rounds):
        s.offset_commit({"foo": {p: r for p in range(32)}})
        if rebalance_every and r % rebalance_every == rebalance_every - 1:
            p = r % 32
            old, new = owners[p], MEMBERS[(MEMBERS.index(owners[p]) + 1) % 4]
            owners[p] = new
            s.metadata_change().compute_target(target()).revoke(old).converge(old).converge(new)
    return s


def best(fn, events) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        fn(events)
        times.append(time.perf_counter() - started)
    return len(events) / min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--rebalance-every", type=int, default=20)
    args = parser.parse_args()
    events = build(args.rounds, args.rebalance_every).events()
    replay = best(replay_partition, events)
    audit = best(audit_partition, events)
    print(f"{len(events)} events: replay {replay:,.0f} events/s, audit {audit:,.0f} events/s "
          f"(audit / replay = {audit / replay:.2f})")


if __name__ == "__main__":
    main()
