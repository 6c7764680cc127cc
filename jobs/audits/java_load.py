"""A partition load by one release's Java group coordinator, modelled on its own classes.

The loader (``CoordinatorLoaderImpl``) reads every batch in log order. A transaction marker goes
to ``replayEndTransactionMarker`` (from 3.7; 3.6's loader fails on any control batch). A data
record is deserialized by the release's serde (an unknown type is skipped with a WARN, anything
else that throws fails the load) and handed to ``GroupCoordinatorShard.replay``, whose first
exception fails the load (fail-closed: the partition's groups stay unavailable). :func:`load`
follows the same steps over :class:`LogEntry` items and returns a :class:`LoadOutcome` in the
shape the coordinator oracle prints (``tests/oracle``), so the two can be compared record for
record.

    outcome = load(entries, RELEASES["3.9.2"])
    outcome.failure            # Failure(offset=17, record_type=8, exception=..., message=...)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from decoders.codec import decode_key, read_value_as
from decoders.errors import DecodeError
from jobs.audits.java_groups import CoordinatorState, Throw, replay_record
from jobs.audits.java_releases import JavaRelease

NO_PRODUCER_ID = -1


class LogEntry(NamedTuple):
    """One record of the log: a data record (``control`` None) or a transaction marker."""

    offset: int
    producer_id: int
    control: str | None          # "COMMIT" / "ABORT" for a marker
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class Failure:
    offset: int
    record_type: int | None
    exception: str
    message: str
    stage: str               # "control", "deserialize" or "replay": where the release throws


@dataclass
class LoadOutcome:
    failure: Failure | None = None
    skipped: list[tuple[int, int]] = field(default_factory=list)     # (offset, record type)
    replayed: int = 0
    state: CoordinatorState = field(default_factory=CoordinatorState)

    @property
    def loaded(self) -> bool:
        return self.failure is None


def load(entries: Iterable[LogEntry], release: JavaRelease, reads: dict | None = None) -> LoadOutcome:
    """The outcome of loading ``entries`` (one partition, or one group's records plus the markers
    of its producers: replay never crosses groups) on ``release``. ``reads``: a memo shared by
    the loads of the same entries on several releases (keyed by offset and how the bytes are
    read), so bytes two releases read alike are read once."""
    out = LoadOutcome()
    reads = {} if reads is None else reads
    for entry in entries:
        if entry.control is not None:
            if release.family == "3.6":     # its loader has no transaction support at all
                out.failure = Failure(entry.offset, None, "java.lang.IllegalStateException",
                                      "Control batches are not supported yet.", "control")
                return out
            out.state.end_transaction(entry.producer_id, entry.control == "COMMIT", release)
            continue
        try:
            record_type, key, value = _deserialize(entry, release, reads)
        except _Skipped as skip:
            out.skipped.append((entry.offset, skip.record_type))
            continue
        except Throw as err:
            out.failure = Failure(entry.offset, err.record_type, err.exception, err.message,
                                  "deserialize")
            return out
        try:
            replay_record(out.state, release, entry.offset, entry.producer_id, record_type, key, value)
        except Throw as err:
            out.failure = Failure(entry.offset, record_type, err.exception, err.message, "replay")
            return out
        out.replayed += 1
    return out


class _Skipped(Exception):
    def __init__(self, record_type: int):
        self.record_type = record_type


def _deserialize(entry: LogEntry, release: JavaRelease, reads: dict) -> tuple[int, dict, dict | None]:
    """``(type, key fields, value fields | None)`` as the release's serde reads them."""
    key = entry.key or b""
    if len(key) < 2:
        raise Throw("java.lang.RuntimeException", "Could not read version from key's buffer.", None)
    record_type = int.from_bytes(key[:2], "big", signed=True)
    if record_type not in release.serde_types:
        raise _Skipped(record_type)
    key_fields = _read(reads, (entry.offset,), lambda: decode_key(key)[2], "key", record_type)
    if entry.value is None:
        return record_type, key_fields, None
    if len(entry.value) < 2:
        raise Throw("java.lang.RuntimeException", "Could not read version from value's buffer.",
                    record_type)
    version = int.from_bytes(entry.value[:2], "big", signed=True)
    top = release.max_versions[record_type]
    if not 0 <= version <= top:
        if release.unknown_version_fails or version < 0:
            raise Throw("UnknownRecordVersionException",
                        f"type {record_type} value version {version} is outside 0-{top}", record_type)
        version = top          # the generated read() takes any version: fields gated on >= top
    catalog_type, layout = _catalog_type(record_type, release), release.layout(record_type)
    value = _read(reads, (entry.offset, catalog_type, version, layout),
                  lambda: read_value_as(catalog_type, version, entry.value, layout), "value",
                  record_type)
    return record_type, key_fields, value


def _read(reads: dict, memo_key: tuple, read, part: str, record_type: int):
    """``read()``, once per ``memo_key``; its DecodeError is remembered too, as the Throw a
    release's serde makes of it. The fields are shared: replay only reads them."""
    found = reads.get(memo_key)
    if found is None:
        try:
            found = (True, read())
        except DecodeError as err:
            found = (False, f"{part}: {err}")
        reads[memo_key] = found
    if not found[0]:
        raise Throw("java.lang.RuntimeException", found[1], record_type)
    return found[1]


def _catalog_type(record_type: int, release: JavaRelease) -> int:
    """Before 4.1, type 0 shared type 1's OffsetCommitValue schema (v0-v4)."""
    return 1 if record_type == 0 and release.release < (4, 1, 0) else record_type
