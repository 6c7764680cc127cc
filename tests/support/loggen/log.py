"""A generated log: batches per partition, written as real segment files.

``write(directory)`` lays out what a broker's log dir holds::

    <directory>/__consumer_offsets-<p>/00000000000000000000.log
                                      /<20-digit base offset>.log     (further segments)

Each batch goes to the last segment whose base offset is at or below the batch's base offset;
segments left empty by compaction are not written (the cleaner merges them into their
neighbours), except the first, so every partition has a directory and a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from decoders.log.types import LogRecord
from decoders.log.writer import encode_batch, encode_control_batch, write_segment
from support.loggen.builder import Mark
from support.loggen.compaction import CleaningPass
from support.loggen.describe import describe
from support.loggen.records import record_bytes
from support.scenarios.log import CONTROL_IDS, Batch


@dataclass
class GeneratedLog:
    seed: int | None
    partitions: dict[int, list[Batch]]
    segment_bases: dict[int, list[int]] = field(default_factory=dict)
    cleanings: dict[int, list[CleaningPass]] = field(default_factory=dict)
    raw: dict[int, list[Batch]] | None = None      # before compaction (None once shrunk)
    marks: list[Mark] = field(default_factory=list)

    def records(self) -> Iterator[tuple[int, Batch, int, object]]:
        """(partition, batch, offset, record) of every data record, in log order."""
        for p, batches in sorted(self.partitions.items()):
            for batch in batches:
                for offset, rec in batch.records:
                    yield p, batch, offset, rec

    @property
    def record_count(self) -> int:
        return sum(len(b.records) for bs in self.partitions.values() for b in bs)

    def offsets(self, partition: int) -> set[int]:
        """Offsets of every record and marker still in the partition."""
        out = set()
        for b in self.partitions.get(partition, []):
            out.update(o for o, _ in b.records)
            if b.control_type is not None:
                out.add(b.base_offset)
        return out

    def shapes(self) -> set[str]:
        """The deliberate shapes whose records all survive in this log."""
        present = {p: self.offsets(p) for p in self.partitions}
        return {m.shape for m in self.marks
                if m.partition in present and present[m.partition].issuperset(m.offsets)}

    def segments(self, partition: int) -> list[tuple[int, list[Batch]]]:
        bases = sorted(set(self.segment_bases.get(partition, [])) | {0})
        split: dict[int, list[Batch]] = {base: [] for base in bases}
        for batch in self.partitions[partition]:
            split[max(b for b in bases if b <= batch.base_offset)].append(batch)
        return [(base, bs) for base, bs in split.items() if bs or base == 0]

    def write(self, directory: str | os.PathLike) -> Path:
        """Write every partition's segment files under ``directory``; returns it."""
        directory = Path(directory)
        for p in sorted(self.partitions):
            part_dir = directory / f"__consumer_offsets-{p}"
            part_dir.mkdir(parents=True, exist_ok=True)
            for base, batches in self.segments(p):
                write_segment(part_dir / f"{base:020d}.log", [batch_bytes(b) for b in batches])
        return directory

    def segment_bytes(self) -> dict[str, bytes]:
        """What :meth:`write` would write: relative path -> bytes."""
        return {f"__consumer_offsets-{p}/{base:020d}.log": b"".join(batch_bytes(b) for b in bs)
                for p in sorted(self.partitions) for base, bs in self.segments(p)}

    def describe(self) -> str:
        """One line per record and marker (:mod:`support.loggen.describe`)."""
        return describe(self)


def batch_bytes(batch: Batch) -> bytes:
    if batch.control_type is not None:
        return encode_control_batch(CONTROL_IDS[batch.control_type], 0, offset=batch.base_offset,
                                    producer_id=batch.producer_id,
                                    producer_epoch=batch.producer_epoch, timestamp=batch.timestamp)
    records = [LogRecord(offset, batch.timestamp, *record_bytes(rec))
               for offset, rec in batch.records]
    return encode_batch(records, base_offset=batch.base_offset, producer_id=batch.producer_id,
                        producer_epoch=batch.producer_epoch,
                        is_transactional=batch.is_transactional, last_offset=batch.last_offset,
                        base_timestamp=batch.timestamp)
