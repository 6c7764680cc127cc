"""What a finding rests on: log positions, the coverage of the log, and the finding row itself.

``__consumer_offsets`` is compacted, and the cleaner keeps offsets: a missing offset proves a
record was removed there. :class:`LogCoverage` knows the missing ranges of each partition; a rule
that needs history (``Rule.needs_history``) whose evidence spans a missing range gets the verdict
``partial``: the log can neither prove nor refute it, which is not a false alarm.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from jobs.audits import rules as _rules  # noqa: F401  (fills the registry)
from jobs.audits.registry import NOTICE, PARTIAL, RULES, VIOLATION

Gap = tuple[int, int]   # missing offsets [start, end)


@dataclass
class LogCoverage:
    """Missing offset ranges per ``__consumer_offsets`` partition (empty: an uncompacted log)."""

    gaps: dict[int, list[Gap]] = field(default_factory=dict)

    @classmethod
    def from_offsets(cls, offsets_by_partition: dict[int, Iterable[int]]) -> LogCoverage:
        """Gaps between the offsets present (a log not starting at 0 misses ``[0, first)``)."""
        gaps: dict[int, list[Gap]] = {}
        for partition, offsets in offsets_by_partition.items():
            previous = -1
            for offset in sorted(set(offsets)):
                if offset > previous + 1:
                    gaps.setdefault(partition, []).append((previous + 1, offset))
                previous = offset
        return cls(gaps)

    @classmethod
    def from_events(cls, events: Iterable) -> LogCoverage:
        offsets: dict[int, list[int]] = {}
        for e in events:
            offsets.setdefault(e.partition, []).append(e.offset)
        return cls.from_offsets(offsets)

    def has_gap(self, partition: int, start: int, end: int) -> bool:
        """Whether any offset in ``[start, end)`` of ``partition`` is missing."""
        gaps = self.gaps.get(partition, [])
        i = bisect.bisect_right(gaps, (start, float("inf"))) - 1
        for gap_start, gap_end in gaps[max(i, 0):]:
            if gap_start >= end:
                return False
            if gap_end > start:
                return True
        return False


def finding(rule_id: str, group_id: str | None, position: tuple[int, int] | None, message: str, *,
            member_id: str | None = None, topic: str | None = None, topic_id=None,
            partition: int | None = None, evidence: Iterable[int] = (),
            severity: str | None = None, partial: bool = False, details: dict | None = None) -> dict:
    """One row of the ``findings`` contract (``jobs.lake.findings``) without the snapshot id.

    ``evidence``: log offsets (same partition as ``position``) the finding rests on; ``partial``
    marks that the evidence spans a compacted range (only history rules may be partial)."""
    rule = RULES[rule_id]
    severity = (severity or rule.severity).lower()
    if partial and rule.needs_history:
        verdict = PARTIAL
    else:
        verdict = NOTICE if severity == "info" else VIOLATION
    log_partition, log_offset = position if position is not None else (None, None)
    offsets = sorted({*evidence, *([log_offset] if log_offset is not None else [])})
    return {"rule_id": rule_id, "severity": severity, "verdict": verdict, "group_id": group_id,
            "member_id": member_id, "topic": topic,
            "topic_id": None if topic_id is None else str(topic_id), "partition": partition,
            "log_partition": log_partition, "log_offset": log_offset,
            "evidence_log_offsets": offsets,
            "message": f"{message.rstrip('.')}. Expected: {rule.invariant}",
            "details": json.dumps(details or {}, sort_keys=True, default=str)}
