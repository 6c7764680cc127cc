"""Which release writes the log at each moment, and what that release writes.

A generated cluster is upgraded over its lifetime (never downgraded: downgrades are what the
differential suite asks the releases about), so one log mixes the formats of several writers:
type 0 and OffsetCommitValue v1 from old brokers, the 3.7 layouts of types 4/5/7/8, type-4
records until 4.0 then tombstones, MetadataHash from 4.1, AssignmentEpochs from 4.3 ...
Facts from the wire-format reference §a and replay reference §1 / corrections box.
"""

from __future__ import annotations

from random import Random

Era = tuple[int, int]

RELEASES: tuple[Era, ...] = ((0, 8), (0, 10), (2, 1), (2, 4), (3, 7), (3, 9), (4, 0), (4, 1),
                             (4, 2), (4, 3), (4, 4))
HISTORICAL_370 = "historical/3.7.0"
HISTORICAL_40 = "historical/4.0"

# First release whose coordinator writes each group kind (3.7: KIP-848 early access with the
# new coordinator enabled; share groups 4.0 preview; streams groups 4.1 early access).
KIND_SINCE: dict[str, Era] = {"simple": (0, 8), "classic": (0, 8), "connect": (0, 10),
                              "consumer": (3, 7), "conversion": (4, 0), "share": (4, 0),
                              "streams": (4, 1)}


class Timeline:
    """The cluster's release at each tick: a start release, then upgrades at random ticks."""

    def __init__(self, rng: Random, expected_ticks: int):
        # Mostly clusters that ran the new coordinator; sometimes a long history from 0.8 on.
        first = rng.choice((0, 1, 2, 3)) if rng.random() < 0.12 else rng.randrange(4, 10)
        last = rng.randrange(first, len(RELEASES))
        releases = RELEASES[first:last + 1]
        if len(releases) > 1:   # skip some intermediate releases, as real upgrades do
            middle = [r for r in releases[1:-1] if rng.random() < 0.5]
            releases = (releases[0], *middle, releases[-1])
        cuts = sorted(rng.randrange(1, max(2, expected_ticks)) for _ in releases[1:])
        self.steps = list(zip([0, *cuts], releases))
        self.final = releases[-1]

    def at(self, tick: int) -> Era:
        era = self.steps[0][1]
        for start, release in self.steps:
            if tick >= start:
                era = release
        return era


def offset_commit_format(era: Era, rng: Random) -> tuple[int, int]:
    """(record type, value version) of an offset commit written by ``era``."""
    if era < (0, 10):
        return 0, 0                       # 0.8.2: key version 0
    if era < (2, 1):
        return 1, 1                       # 0.9-2.0: v1, with an expire timestamp
    if era < (4, 1):
        # 2.1+ writes v3; v1 again when the client sends an explicit retention time.
        return 1, 1 if rng.random() < 0.01 else 3
    return 1, 4


def group_metadata_version(era: Era) -> int:
    return 0 if era < (0, 10) else 1 if era < (2, 1) else 2 if era < (2, 3) else 3


def blob_version(era: Era) -> int:
    """ConsumerProtocolSubscription/Assignment version a client of that time sent."""
    return 0 if era < (2, 4) else 1 if era < (3, 0) else 3


def consumer_layout(era: Era) -> str | None:
    """Value layout of types 4, 5, 7, 8 (3.6/3.7 reused version 0 for other fields)."""
    return HISTORICAL_370 if era < (3, 8) else None


def share_layout(era: Era) -> str | None:
    """Value layout of types 11 and 15 (4.0's share-group preview)."""
    return HISTORICAL_40 if era == (4, 0) else None


def writes_partition_metadata(era: Era) -> bool:
    """Type 4 (and share type 9) values: written up to 4.0, only tombstoned from 4.1."""
    return era < (4, 1)


def has_metadata_hash(era: Era) -> bool:
    return era >= (4, 1)


def has_assignment_epochs(era: Era) -> bool:
    """KIP-1251 AssignmentEpochs on type 8 (4.3); streams type 22 has them from 4.2."""
    return era >= (4, 3)


def has_assignment_timestamp(era: Era) -> bool:
    return era >= (4, 3)
