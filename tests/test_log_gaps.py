"""``decoders.log.gaps``: the ranges an incremental lake derives from its gaps and removals are
the ranges a scan of a snapshot's offsets finds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders.log.gaps import gaps_after, held_runs, missing_runs


def scan(offsets: list[int]) -> list[tuple[int, int]]:
    """What jobs.stages.audit.compacted_ranges finds: [previous + 1, offset) wherever the
    ascending offsets skip, the previous of the first being -1."""
    found, previous = [], -1
    for offset in offsets:
        if offset > previous + 1:
            found.append((previous + 1, offset))
        previous = offset
    return found


def test_gaps_after_starts_at_zero_for_a_first_snapshot_and_after_the_last_held_later():
    assert gaps_after(-1, np.array([0, 1, 2])) == []
    assert gaps_after(-1, np.array([2, 3, 6])) == [(0, 2), (4, 6)]
    assert gaps_after(9, np.array([10, 12])) == [(11, 12)]
    assert gaps_after(9, np.array([], np.int64)) == []


def test_runs_merge_touching_ranges_and_points_and_leave_out_the_tail():
    assert missing_runs([(0, 2), (5, 6)], np.array([2, 3, 9])) == [(0, 4), (5, 6), (9, 10)]
    assert missing_runs([], np.array([], np.int64)) == []
    # 9 is removed and was the newest held offset: a tail, not a gap between records
    assert held_runs([(0, 2)], np.array([7, 8, 9]), last_held=9) == [(0, 2)]
    assert held_runs([(0, 2)], np.array([7, 8]), last_held=9) == [(0, 2), (7, 9)]


@st.composite
def series(draw):
    """A log's history as snapshots see it: each snapshot appends offsets after the newest one
    written (some never seen: compacted before any snapshot) and removes some it held."""
    written, held, gaps, removed, snaps = -1, set(), [], set(), []
    for _ in range(draw(st.integers(1, 6))):
        step = sorted(set(draw(st.lists(st.integers(1, 40), max_size=12))))
        new = [written + d for d in step]
        last_held = max([o for o in held | removed] + [-1])
        gaps += gaps_after(last_held, np.array(new, np.int64))
        held |= set(new)
        written = max([written, *new])
        gone = set(draw(st.lists(st.sampled_from(sorted(held)), max_size=len(held)))) if held else set()
        held -= gone
        removed |= gone
        last_held = max([o for o in held | removed] + [-1])
        snaps.append((sorted(held), list(gaps), sorted(removed), last_held))
    return snaps


@settings(max_examples=300, deadline=None)
@given(series())
def test_every_snapshot_s_ranges_from_gaps_and_removals_are_what_a_scan_finds(snaps):
    for held, gaps, removed, last_held in snaps:
        assert held_runs(gaps, np.array(removed, np.int64), last_held) == scan(held)
