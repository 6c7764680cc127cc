"""Offsets a log does not hold, as ``[start, end)`` ranges: what an incremental lake never saw
(its ``gaps`` table) and what one snapshot lacks between its records (compaction's ranges).

Pure: offsets in, ranges out (numpy, for the hundred thousands of points a step brings).

    >>> gaps_after(-1, np.array([3, 4, 7]))
    [(0, 3), (5, 7)]
    >>> held_runs([(0, 3)], np.array([3, 9]), last_held=10)
    [(0, 4), (9, 10)]
"""

from __future__ import annotations

import numpy as np

Range = tuple[int, int]


def gaps_after(last: int, offsets: np.ndarray) -> list[Range]:
    """The ranges missing from ``last`` (the offset held before them; -1: none, so a log that
    starts after 0 has a gap from 0) through the ascending ``offsets``."""
    if not len(offsets):
        return []
    chain = np.concatenate((np.array([last], np.int64), np.asarray(offsets, np.int64)))
    at = np.flatnonzero(np.diff(chain) > 1)
    return [(int(chain[i] + 1), int(chain[i + 1])) for i in at]


def missing_runs(ranges: list[Range], points: np.ndarray) -> list[Range]:
    """The maximal runs of offsets that are in one of ``ranges`` or are one of ``points``."""
    points = np.asarray(points, np.int64)
    starts = np.concatenate((np.array([s for s, _ in ranges], np.int64), points))
    ends = np.concatenate((np.array([e for _, e in ranges], np.int64), points + 1))
    if not len(starts):
        return []
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    first = np.flatnonzero(np.concatenate(([True], starts[1:] > reach[:-1])))
    return list(zip(starts[first].tolist(), np.maximum.reduceat(ends, first).tolist()))


def held_runs(ranges: list[Range], points: np.ndarray, last_held: int) -> list[Range]:
    """A snapshot's missing ranges between its records: the runs of never-held ``ranges`` and
    removed ``points`` that end at an offset it holds (at most ``last_held``, the newest offset
    held; a run reaching past it is the log's tail, not a gap). Exactly the ranges a scan of
    the snapshot's offsets finds (:func:`jobs.stages.audit.compacted_ranges`), when every
    offset up to ``last_held`` outside them is held."""
    return [(s, e) for s, e in missing_runs(ranges, points) if e <= last_held]
