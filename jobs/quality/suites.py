"""The expectation suites, as data: each suite is a dataset (a SQL query over the lake's catalog,
see :mod:`jobs.lake.views`) and the great-expectations expectations it must meet.

Cross-table invariants become one boolean column per row (``is_in_epoch_order`` ...) expected to be
true, so a failure lists the offending rows' keys in the Data Docs. The exemptions follow the
reference's epoch invariants (replay-fencing-downgrade.md §3.4 and its corrections box, item 3):
members at -2 (static member left) or -1 are outside the epoch order, a group whose target epoch
is unknown (-1, null) is not checked, and assignment epochs above a member epoch of 0 or -2 are
legitimate (a static rejoin copies the old member's assignment epochs).
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_EPOCH = -2  # -2: static member left; -1: deleted; both appear in the tables


@dataclass(frozen=True)
class Expectation:
    kind: str      # great_expectations.expectations class name
    kwargs: dict

    def describe(self) -> str:
        column = self.kwargs.get("column", "")
        return f"{self.kind}({column})" if column else self.kind


@dataclass(frozen=True)
class Suite:
    name: str
    query: str
    expectations: tuple[Expectation, ...]


def not_null(*columns: str) -> list[Expectation]:
    return [Expectation("ExpectColumnValuesToNotBeNull", {"column": c}) for c in columns]


def at_least(minimum, *columns: str) -> list[Expectation]:
    return [Expectation("ExpectColumnValuesToBeBetween", {"column": c, "min_value": minimum})
            for c in columns]


def all_true(column: str) -> Expectation:
    return Expectation("ExpectColumnValuesToBeInSet", {"column": column, "value_set": [True]})


EPOCH_ORDER = """
select m.group_id, m.member_id, m.member_epoch, g.target_assignment_epoch, g.group_epoch,
       m.member_epoch <= g.target_assignment_epoch
           and g.target_assignment_epoch <= g.group_epoch as is_in_epoch_order
from members as m
join groups as g on m.snapshot_id = g.snapshot_id and m.group_id = g.group_id
where m.member_epoch >= 0 and g.target_assignment_epoch >= 0
"""

GROUP_EPOCH_ORDER = """
select group_id, target_assignment_epoch, group_epoch,
       target_assignment_epoch <= group_epoch as is_in_epoch_order
from groups
where target_assignment_epoch >= 0
"""

ASSIGNMENT_EPOCHS = """
select a.group_id, a.member_id, a.topic_name, a.subtopology_id, a.partition, a.assignment_epoch,
       m.member_epoch, a.assignment_epoch <= m.member_epoch as is_within_member_epoch
from member_assignments as a
join members as m
    on a.snapshot_id = m.snapshot_id and a.group_id = m.group_id and a.member_id = m.member_id
where m.member_epoch is not null and m.member_epoch not in (0, -2)
"""

SNAPSHOT_ACCOUNTING = """
select snapshot_id, data_record_count, decoded_record_count, control_record_count,
       decode_quarantine_count,
       decode_quarantine_count / greatest(data_record_count, 1) as decode_error_rate,
       raw_record_count - (decoded_record_count + control_record_count + decode_quarantine_count)
           as unaccounted_record_count
from snapshot_facts
"""


def suites(max_decode_error_rate: float) -> list[Suite]:
    """Every suite, in the order they run."""
    def table(name: str, *expectations) -> Suite:
        flat = tuple(e for group in expectations for e in group)
        columns = ", ".join(dict.fromkeys(f"`{e.kwargs['column']}`" for e in flat))
        return Suite(name, f"select {columns} from {name}", flat)

    return [
        table("raw_records", not_null("snapshot_id", "partition", "offset")),
        table("records", not_null("snapshot_id", "partition", "offset", "record_type", "group_id")),
        table("groups", not_null("group_id", "group_type", "group_state"),
              at_least(MIN_EPOCH, "group_epoch", "target_assignment_epoch", "generation")),
        table("members", not_null("group_id", "member_id"),
              at_least(MIN_EPOCH, "member_epoch", "previous_member_epoch")),
        table("member_assignments", not_null("group_id", "member_id", "partition"),
              at_least(MIN_EPOCH, "assignment_epoch")),
        table("target_assignments", not_null("group_id", "member_id", "partition"),
              at_least(MIN_EPOCH, "target_assignment_epoch")),
        table("offsets", not_null("group_id", "topic", "partition")),
        table("epochs", not_null("group_id", "epoch_kind", "epoch"), at_least(MIN_EPOCH, "epoch")),
        Suite("member_epoch_order", EPOCH_ORDER, (all_true("is_in_epoch_order"),)),
        Suite("group_epoch_order", GROUP_EPOCH_ORDER, (all_true("is_in_epoch_order"),)),
        Suite("assignment_epochs", ASSIGNMENT_EPOCHS, (all_true("is_within_member_epoch"),)),
        Suite("snapshot_accounting", SNAPSHOT_ACCOUNTING, (
            Expectation("ExpectColumnValuesToBeBetween",
                        {"column": "decode_error_rate", "min_value": 0,
                         "max_value": max_decode_error_rate}),
            Expectation("ExpectColumnValuesToBeBetween",
                        {"column": "unaccounted_record_count", "min_value": 0, "max_value": 0}),
            Expectation("ExpectTableRowCountToEqual", {"value": 1}),
        )),
    ]
