"""Helpers for the KIP-848 case-study tests: expectations in the KIP's own notation.

The KIP draws each member as ``epoch, partitions=[...], pending-partitions=[...]``. In 4.x records:

* KIP ``partitions`` = what the member still owns = AssignedPartitions ∪ PartitionsPendingRevocation;
* KIP ``pending-partitions`` = target partitions the member waits for because another member still
  owns them (state UNRELEASED_PARTITIONS);
* the member state and the partitions being revoked are what the 4.x record adds; they are
  asserted too (``state``, ``revoking``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.replay import replay_group
from jobs.replay.describe import describe_group


def parts(text: str) -> list[str]:
    return sorted(text.split(), key=lambda tp: (tp.rsplit("-", 1)[0], int(tp.rsplit("-", 1)[1])))


@dataclass(frozen=True)
class M:
    """A member as the KIP draws it, plus the 4.x state and revoking set."""

    epoch: int
    partitions: str = ""
    pending: str = ""
    state: str = "STABLE"
    revoking: str = ""
    classic: bool = False


@dataclass(frozen=True)
class G:
    group_epoch: int
    target_epoch: int
    group_state: str
    target: dict[str, str]
    members: dict[str, M] = field(default_factory=dict)


def kip_view(description: dict) -> dict:
    """The replayed group in the KIP's notation."""
    members = {}
    for mid, m in description["members"].items():
        owned = parts(" ".join(m["assigned"] + m["pending_revocation"]))
        members[mid] = (m["member_epoch"], owned, m["unreleased"], m["member_state"],
                        m["pending_revocation"], m["uses_classic_protocol"])
    return {"group_epoch": description["group_epoch"],
            "target_epoch": description["target_assignment_epoch"],
            "group_state": description["group_state"],
            "target": {mid: ps for mid, ps in description["target"].items()},
            "members": members}


def expected_view(g: G) -> dict:
    return {"group_epoch": g.group_epoch, "target_epoch": g.target_epoch,
            "group_state": g.group_state,
            "target": {mid: parts(ps) for mid, ps in sorted(g.target.items())},
            "members": {mid: (m.epoch, parts(m.partitions), parts(m.pending), m.state,
                              parts(m.revoking), m.classic)
                        for mid, m in sorted(g.members.items())}}


def run_case(scenario, steps) -> None:
    """Apply every ``(label, action, expected)`` step, then replay the log prefix after each step
    and compare the group with the expectation (and check replay found no violation)."""
    first = len(scenario.steps)
    for _, action, _ in steps:
        action(scenario)
    assert len(scenario.steps) == first + len(steps)
    for i, (label, _, expected) in enumerate(steps):
        result = replay_group(scenario.events(through_step=first + i),
                              topic_names=scenario.topic_names)
        assert result.violations == [], label
        actual = kip_view(describe_group(result.group("g"), scenario.topic_names))
        assert actual == expected_view(expected), label


def check_now(scenario, expected: G) -> None:
    result = replay_group(scenario.events(), topic_names=scenario.topic_names)
    assert result.violations == []
    assert kip_view(describe_group(result.group("g"), scenario.topic_names)) == expected_view(expected)
