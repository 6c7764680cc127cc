"""What an older group coordinator understands: one :class:`Target` per downgrade target, as data.

The facts (``../shared/reference/replay-fencing-downgrade.md`` §5.2 and its corrections box, the
generated classes in the 3.9.2 / 4.0.2 / 4.2.1 / 4.3.1 jars, and the brokers themselves, see
``tests/integration/test_downgrade_vs_brokers.py``):

* Scala coordinator (every release up to 3.9, the default up to 3.9): knows types 0-2. Up to
  3.4.0 (and every 3.0-3.3 release: KIP-915 part 1 was merged on those branches but never
  released) an unknown key type aborts the load; from 3.4.1 it is skipped with a WARN. A value
  version above the highest known aborts the load. Any load error is caught and the partition is
  still marked loaded: **fail-open**, its groups look empty.
* Java coordinator (3.6-3.9 when enabled, the only one from 4.0): unknown types are skipped with
  a WARN; up to 3.9 an unknown value version is read with the newest layout, from 4.0 it fails the
  load; any replay exception fails the load: **fail-closed**, the partition's groups are
  unavailable. What each release's serde and replay accept is :mod:`java_releases`, and its
  load is followed record by record in :mod:`java_load` (checked against the releases' own
  classes by ``tests/differential``).
* Layouts: 3.6/3.7 read types 4, 5, 7, 8 with the 3.7 value layout, 4.0 reads 11 and 15 with
  its own; a record written in another layout under the same version is misread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jobs.audits.java_releases import java_release

SCALA, JAVA = "scala", "java"
NEW_COORDINATOR = "+new-coordinator"
CONSUMER_TYPES = frozenset({3, 4, 5, 6, 7, 8, 16})
SHARE_TYPES = frozenset(range(9, 16))
STREAMS_TYPES = frozenset(range(17, 25))
OFFSET_TYPES = frozenset({0, 1})


def group_kind(record_type: int | None) -> str:
    """The kind of state a record type holds, in the words the verdicts use."""
    if record_type in OFFSET_TYPES:
        return "offset-commit"
    if record_type == 2:
        return "classic-group"
    if record_type in CONSUMER_TYPES:
        return "consumer-group"
    if record_type in SHARE_TYPES:
        return "share-group"
    if record_type in STREAMS_TYPES:
        return "streams-group"
    return "unknown-type"


@dataclass(frozen=True)
class Target:
    """One downgrade target: what its coordinator decodes and how it fails."""

    name: str                          # as the operator wrote it, normalised ("3.9", "3.9+new-coordinator")
    release: tuple[int, int, int]
    coordinator: str                   # SCALA or JAVA
    known_types: frozenset[int]
    max_versions: dict[int, int]       # record type -> highest value version it reads
    unknown_type_fails: bool           # Scala before 3.4.1: an unknown key aborts the load
    unknown_version_fails: bool        # else read as the newest layout (Java 3.6-3.9)
    layouts: dict[int, str] = field(default_factory=dict)  # type -> value layout it reads
    known_tags: frozenset[tuple[int, str]] = frozenset()

    @property
    def failure_mode(self) -> str:
        return "fail-closed" if self.coordinator == JAVA else "fail-open"

    def layout(self, record_type: int) -> str:
        return self.layouts.get(record_type, "current")

    def __str__(self) -> str:
        return self.name


# Tagged fields (path as :func:`downgrade_facts.tagged_fields` names them) and the first release
# whose generated classes read them (checked with javap on the 3.9.2, 4.0.2, 4.2.1, 4.3.1 jars).
TAG_SINCE: dict[tuple[int, str], tuple[int, int]] = {
    (1, "topicId"): (4, 1),
    (3, "metadataHash"): (4, 1),
    (5, "classicMemberMetadata"): (3, 8),
    (6, "assignmentTimestamp"): (4, 3),
    (12, "assignmentTimestamp"): (4, 3),
    (20, "assignmentTimestamp"): (4, 3),
    (8, "assignedPartitions[].assignmentEpochs"): (4, 3),
    (8, "partitionsPendingRevocation[].assignmentEpochs"): (4, 3),
    (17, "validatedTopologyEpoch"): (4, 1),
    (17, "lastAssignmentConfigs"): (4, 2),
    **{(22, f"{tasks}[].assignmentEpochs"): (4, 2) for tasks in (
        "activeTasks", "standbyTasks", "warmupTasks", "activeTasksPendingRevocation",
        "standbyTasksPendingRevocation", "warmupTasksPendingRevocation")},
}

# What each tagged field carries, for DU-5 messages.
TAG_SEMANTICS = {
    "topicId": "the committed topic's id (recreated-topic detection)",
    "metadataHash": "the subscribed topics' metadata hash (a new target assignment is computed)",
    "classicMemberMetadata": "a classic-protocol member's session timeout and subscription",
    "assignmentTimestamp": "when the target assignment was computed",
    "assignmentEpochs": "per-partition assignment epochs (KIP-1251 relaxed commit fencing)",
    "validatedTopologyEpoch": "the validated topology epoch",
    "lastAssignmentConfigs": "the assignment configs of the last assignment",
}

_SCALA_ROWS = (  # (first, last, offset commit max, group metadata max, unknown type fails)
    ((2, 0, 0), (2, 0, 99), 1, 1, True),
    ((2, 1, 0), (2, 2, 99), 3, 2, True),
    ((2, 3, 0), (3, 4, 0), 3, 3, True),
    ((3, 4, 1), (3, 9, 99), 4, 4, False),
)
# ``--target-version all``: one target per distinct behaviour: each Scala profile row (by its
# newest release), the new coordinator on every 3.x line that has it, every 4.x release line.
ALL_TARGETS = ("2.0", "2.2", "3.4.0", "3.9", "3.6+new-coordinator", "3.7+new-coordinator",
               "3.8+new-coordinator", "3.9+new-coordinator", "4.0", "4.1", "4.2", "4.3", "4.4")
_LATEST_PATCH = {(3, 4): 1}  # "3.4" means its newest patch, 3.4.1
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(\+new-coordinator|\+new)?$")


def parse_target(text: str) -> Target:
    """``"3.9"`` (default coordinator), ``"3.9+new-coordinator"`` (or ``+new``), ``"4.0"``,
    ``"2.8.2"`` ... A version without a patch stands for its line's newest patch."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f"not a Kafka version: {text!r} (e.g. 3.9, 3.9+new-coordinator, 4.0)")
    major, minor = int(match.group(1)), int(match.group(2))
    patch = int(match.group(3)) if match.group(3) else _LATEST_PATCH.get((major, minor), 0)
    release, new = (major, minor, patch), bool(match.group(4))
    name = f"{major}.{minor}" + (f".{patch}" if match.group(3) else "") + (NEW_COORDINATOR if new else "")
    if release >= (4, 5, 0):
        raise ValueError(f"{text}: only releases up to 4.4 are downgrade targets")
    if release >= (4, 0, 0) or new:
        if release < (3, 6, 0):
            raise ValueError(f"{text}: the new group coordinator exists from 3.6")
        return _java(name, release)
    return _scala(name, release)


def _scala(name: str, release) -> Target:
    for first, last, offsets, groups, fails in _SCALA_ROWS:
        if first <= release <= last:
            return Target(name, release, SCALA, frozenset({0, 1, 2}),
                          {0: offsets, 1: offsets, 2: groups}, fails, True)
    raise ValueError(f"{name}: no group coordinator profile before 2.0")


def _java(name: str, release) -> Target:
    profile = java_release(release)
    tags = frozenset(tag for tag, since in TAG_SINCE.items() if release[:2] >= since)
    return Target(name, release, JAVA, profile.serde_types, dict(profile.max_versions), False,
                  profile.unknown_version_fails, dict(profile.layouts), tags)
