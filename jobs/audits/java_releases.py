"""What each release's Java group coordinator does when it loads ``__consumer_offsets``, as data.

One :class:`JavaRelease` per supported release. Every fact below was read in that release's own
classes (the ``kafka-group-coordinator`` and ``kafka-coordinator-common`` jars of Maven Central,
their JSON schemas and ``javap``), and is checked by the differential suite
(``tests/differential``), which replays generated logs through the real classes
(``tests/oracle``) and through :mod:`jobs.audits.java_load`:

* ``serde_types``: the record types the release's serde deserializes (``apiMessageKeyFor``); any
  other type raises ``UnknownRecordTypeException``, which the loader logs and skips.
* ``replay_types``: the types ``GroupCoordinatorShard.replay`` dispatches; a type the serde knows
  but replay does not throws ``IllegalStateException("Received an unknown record type")`` and the
  load fails (4.0's ShareGroupStatePartitionMetadata, type 15).
* value versions: from 4.0 ``CoordinatorRecordSerde`` rejects a version outside the schema's
  range (``UnknownRecordVersionException``: the load fails); before, the generated ``read`` takes
  any version and reads it as the newest it knows.
* ``layouts``: types whose v0 layout the release reads differently from today's
  (3.6/3.7: 4, 5, 7, 8; 4.0: 11, 15; 4.0 reads type 9 in the catalog's own "removed" layout),
  named as :mod:`decoders.records_catalog` names them.
* ``family``: the replay semantics (``GroupMetadataManager`` / ``OffsetMetadataManager``):
  ``"3.6"`` (no transactions, no partition epochs), ``"3.7"`` (transactions, markers overwrite,
  no partition epochs), ``"3.8"`` (strict partition epochs; a missing group or member throws),
  ``"4.0"`` (KAFKA-17306: missing groups/members created or ignored, simple groups replaced,
  partition epochs only move forward).
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONSUMER = frozenset({3, 4, 5, 6, 7, 8, 16})
SHARE = frozenset(range(9, 16))
STREAMS = frozenset(range(17, 25))


@dataclass(frozen=True)
class JavaRelease:
    version: str
    release: tuple[int, int, int]
    family: str
    serde_types: frozenset[int]
    replay_types: frozenset[int]
    max_versions: dict[int, int]
    layouts: dict[int, str] = field(default_factory=dict)

    @property
    def unknown_version_fails(self) -> bool:
        return self.release >= (4, 0, 0)

    @property
    def at_least_4_0(self) -> bool:
        return self.family not in ("3.6", "3.7", "3.8")

    def layout(self, record_type: int) -> str | None:
        return self.layouts.get(record_type)

    def __str__(self) -> str:
        return self.version


_OLD = frozenset(range(0, 9))
_V40 = frozenset(range(0, 17))
_V41 = frozenset(range(0, 9)) | frozenset(range(10, 18)) | frozenset(range(19, 24))
_OFFSETS_BEFORE_41 = {0: 4, 1: 4, 2: 4}
_OFFSETS_FROM_41 = {0: 0, 1: 4, 2: 4}
_37_LAYOUT = {t: "historical/3.7.0" for t in (4, 5, 7, 8)}


def _versions(types: frozenset[int], offsets: dict[int, int]) -> dict[int, int]:
    return {t: offsets.get(t, 0) for t in types}


RELEASES: dict[str, JavaRelease] = {r.version: r for r in (
    JavaRelease("3.6.2", (3, 6, 2), "3.6", _OLD, _OLD, _versions(_OLD, _OFFSETS_BEFORE_41), _37_LAYOUT),
    JavaRelease("3.7.2", (3, 7, 2), "3.7", _OLD, _OLD, _versions(_OLD, _OFFSETS_BEFORE_41), _37_LAYOUT),
    JavaRelease("3.8.1", (3, 8, 1), "3.8", _OLD, _OLD, _versions(_OLD, _OFFSETS_BEFORE_41)),
    JavaRelease("3.9.2", (3, 9, 2), "3.8", _OLD, _OLD | {10, 11}, _versions(_OLD, _OFFSETS_BEFORE_41)),
    JavaRelease("4.0.2", (4, 0, 2), "4.0", _V40, _V40 - {15}, _versions(_V40, _OFFSETS_BEFORE_41),
                {11: "historical/4.0", 15: "historical/4.0"}),
    JavaRelease("4.1.2", (4, 1, 2), "4.0", _V41, _V41, _versions(_V41, _OFFSETS_FROM_41)),
    JavaRelease("4.2.1", (4, 2, 1), "4.0", _V41, _V41, _versions(_V41, _OFFSETS_FROM_41)),
    JavaRelease("4.3.1", (4, 3, 1), "4.0", _V41, _V41, _versions(_V41, _OFFSETS_FROM_41)),
    JavaRelease("4.4.0", (4, 4, 0), "4.0", _V41, _V41, _versions(_V41, _OFFSETS_FROM_41)),
)}


def java_release(release: tuple[int, int, int]) -> JavaRelease:
    """The profile of ``release``: the supported release of the same line (3.9.0 behaves as 3.9.2)."""
    for r in RELEASES.values():
        if r.release[:2] == release[:2]:
            return r
    raise ValueError(f"no Java group coordinator profile for {'.'.join(map(str, release))}")
