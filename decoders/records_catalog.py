"""The catalog: every coordinator record type id 0-24, looked up by id.

Later code (Spark schemas, docs) reads :func:`record_types` / :func:`catalog_summary`.
"""

from __future__ import annotations

from . import catalog_consumer, catalog_offsets_groups, catalog_share_streams
from .schema import RecordType

_ALL: tuple[RecordType, ...] = (*catalog_offsets_groups.TYPES, *catalog_consumer.TYPES,
                                *catalog_share_streams.SHARE_TYPES,
                                *catalog_share_streams.STREAMS_TYPES)
RECORD_TYPES: dict[int, RecordType] = {rt.record_type: rt for rt in sorted(_ALL, key=lambda r: r.record_type)}


def record_types() -> dict[int, RecordType]:
    """id → :class:`~decoders.schema.RecordType` (key/value structs, versions, layouts)."""
    return dict(RECORD_TYPES)


def record_type(record_type_id: int) -> RecordType | None:
    return RECORD_TYPES.get(record_type_id)


def catalog_summary() -> dict[int, dict]:
    """Plain-data view: name, valid/flexible value versions, status, value layouts."""
    return {
        rid: {"name": rt.name,
              "value_versions": list(rt.versions),
              "flexible_versions": [v for v in rt.versions if rt.is_flexible(v)],
              "status": rt.status,
              "layouts": [lay.name for lay in rt.layouts()]}
        for rid, rt in RECORD_TYPES.items()
    }
