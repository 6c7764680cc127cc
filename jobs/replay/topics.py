"""Topic id <-> name resolution across a whole snapshot, not per group.

Consumer-group assignments (types 7/8) name topics by id, offset commits by name. Each group's
replay learns the pairs its own records carry (type 4 and 15 metadata, 4.1+ offset commits with a
topic id); a group that never commits, or commits only inside transactions (topic id ZERO until
KIP-1319), learns none. A topic id names one topic in a cluster, so a pair learned from any record
of the snapshot names every group's rows: :func:`fill_topic_names` fills the ``topic_name`` left
null in the assignment tables, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

RESOLVED_TABLES = ("member_assignments", "target_assignments")


def merge_topic_names(mappings: Iterable[Mapping]) -> dict[str, str]:
    """One id -> name map (ids as text) from several groups' or partitions' maps."""
    merged: dict[str, str] = {}
    for mapping in mappings:
        for tid, name in mapping.items():
            merged.setdefault(str(tid), name)
    return merged


def fill_topic_names(tables: dict[str, list[dict]], topic_names: Mapping) -> None:
    """Name the assignment rows whose ``topic_name`` is null and whose topic id is known (in place)."""
    names = {str(tid): name for tid, name in topic_names.items()}
    for table in RESOLVED_TABLES:
        for row in tables.get(table, ()):
            if row.get("topic_name") is None and row.get("topic_id") in names:
                row["topic_name"] = names[row["topic_id"]]
