"""Throughput of the downgrade audit's executor code (no Spark): record facts from raw rows
(:func:`jobs.audits.downgrade_facts.facts_from_arrow`) and the audit of those facts for a few
targets (:func:`jobs.audits.downgrade.audit_facts`), on the real 4.3.1 sample's records
repeated, so every record type the sample holds is in the mix (mostly KIP-848 and offsets).

    python bench/bench_downgrade.py [--copies 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402

from decoders.log import RecordBatch, iter_partition_dir  # noqa: E402
from jobs.audits.downgrade import audit_facts  # noqa: E402
from jobs.audits.downgrade_facts import facts_from_arrow, facts_from_table, mark_live  # noqa: E402

TARGETS = ["3.9", "3.9+new-coordinator", "4.0", "4.2"]


def sample_rows() -> list[tuple[int, int, bytes, bytes | None]]:
    rows = []
    for p in range(3):
        for _, item in iter_partition_dir(ROOT / "samples" / "kafka-4.3.1" / f"__consumer_offsets-{p}"):
            if isinstance(item, RecordBatch) and not item.is_control:
                rows += [(p, r.offset, r.key, r.value) for r in item.records]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=200)
    args = parser.parse_args()
    base = sample_rows()
    # Copies shift offsets so every copy is a later log position of the same keys.
    rows = [(p, o + i * 1000, k, v) for i in range(args.copies) for p, o, k, v in base]
    batch = pa.RecordBatch.from_pydict({
        "partition": [r[0] for r in rows], "offset": [r[1] for r in rows],
        "key": pa.array([r[2] for r in rows], pa.binary()),
        "value": pa.array([r[3] for r in rows], pa.binary()),
        # data records of non-transactional batches: the raw columns facts_from_arrow reads
        "producer_id": pa.array([-1] * len(rows), pa.int64()),
        "is_control": pa.array([False] * len(rows), pa.bool_()),
        "control_type": pa.array([None] * len(rows), pa.string())})
    start = time.perf_counter()
    facts_batch = facts_from_arrow(batch)
    facts_s = time.perf_counter() - start
    start = time.perf_counter()
    facts = mark_live(facts_from_table(facts_batch))
    findings = audit_facts(facts, TARGETS)
    audit_s = time.perf_counter() - start
    n = len(rows)
    print(f"{n} records: facts {n / facts_s:,.0f} rec/s; liveness + audit for {len(TARGETS)} "
          f"targets {n / audit_s:,.0f} rec/s ({len(findings)} findings)")


if __name__ == "__main__":
    main()
