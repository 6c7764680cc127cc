"""KIP-848 "Case Studies" written as scenarios, replayed, and asserted after every step.

Each step is one coordinator action; its expectation is the KIP's diagram (see
replay_kip_support for the notation). Where the KIP narrates several heartbeats before its
next diagram, every heartbeat is a step and the intermediate states are asserted as implied.
Deviations of the 4.x coordinator from the KIP's idealised in-memory model are noted inline.
"""

from __future__ import annotations

from support.scenarios import Scenario
from support.kip_notation import G, M, check_now, run_case

UNREV, UNREL = "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS"


def test_basic():
    s = Scenario("g")
    run_case(s, [
        ("A joins", lambda s: s.consumer_join("A", ["foo"]),
         G(1, 0, "Assigning", {}, {"A": M(0)})),
        ("target: all to A", lambda s: s.compute_target({"A": {"foo": [0, 1, 2]}}),
         G(1, 1, "Reconciling", {"A": "foo-0 foo-1 foo-2"}, {"A": M(0)})),
        ("A heartbeats", lambda s: s.converge("A"),
         G(1, 1, "Stable", {"A": "foo-0 foo-1 foo-2"}, {"A": M(1, "foo-0 foo-1 foo-2")})),
        ("B joins", lambda s: s.consumer_join("B", ["foo"]),
         G(2, 1, "Assigning", {"A": "foo-0 foo-1 foo-2"},
           {"A": M(1, "foo-0 foo-1 foo-2"), "B": M(0)})),
        ("target epoch 2", lambda s: s.compute_target({"A": {"foo": [0, 1]}, "B": {"foo": [2]}}),
         G(2, 2, "Reconciling", {"A": "foo-0 foo-1", "B": "foo-2"},
           {"A": M(1, "foo-0 foo-1 foo-2"), "B": M(0)})),
        ("B moves to epoch 2, waits for foo-2", lambda s: s.converge("B"),
         G(2, 2, "Reconciling", {"A": "foo-0 foo-1", "B": "foo-2"},
           {"A": M(1, "foo-0 foo-1 foo-2"), "B": M(2, "", "foo-2", UNREL)})),
        ("A told to revoke foo-2", lambda s: s.revoke("A"),
         G(2, 2, "Reconciling", {"A": "foo-0 foo-1", "B": "foo-2"},
           {"A": M(1, "foo-0 foo-1 foo-2", state=UNREV, revoking="foo-2"),
            "B": M(2, "", "foo-2", UNREL)})),
        ("A acknowledges, epoch 2", lambda s: s.converge("A"),
         G(2, 2, "Reconciling", {"A": "foo-0 foo-1", "B": "foo-2"},
           {"A": M(2, "foo-0 foo-1"), "B": M(2, "", "foo-2", UNREL)})),
        ("B gets foo-2", lambda s: s.converge("B"),
         G(2, 2, "Stable", {"A": "foo-0 foo-1", "B": "foo-2"},
           {"A": M(2, "foo-0 foo-1"), "B": M(2, "foo-2")})),
        ("C joins", lambda s: s.consumer_join("C", ["foo"]),
         G(3, 2, "Assigning", {"A": "foo-0 foo-1", "B": "foo-2"},
           {"A": M(2, "foo-0 foo-1"), "B": M(2, "foo-2"), "C": M(0)})),
        ("target epoch 3", lambda s: s.compute_target(
            {"A": {"foo": [0]}, "B": {"foo": [2]}, "C": {"foo": [1]}}),
         G(3, 3, "Reconciling", {"A": "foo-0", "B": "foo-2", "C": "foo-1"},
           {"A": M(2, "foo-0 foo-1"), "B": M(2, "foo-2"), "C": M(0)})),
        ("B to epoch 3, nothing to revoke", lambda s: s.converge("B"),
         G(3, 3, "Reconciling", {"A": "foo-0", "B": "foo-2", "C": "foo-1"},
           {"A": M(2, "foo-0 foo-1"), "B": M(3, "foo-2"), "C": M(0)})),
        ("C to epoch 3, waits for foo-1", lambda s: s.converge("C"),
         G(3, 3, "Reconciling", {"A": "foo-0", "B": "foo-2", "C": "foo-1"},
           {"A": M(2, "foo-0 foo-1"), "B": M(3, "foo-2"), "C": M(3, "", "foo-1", UNREL)})),
        ("A told to revoke foo-1", lambda s: s.revoke("A"),
         G(3, 3, "Reconciling", {"A": "foo-0", "B": "foo-2", "C": "foo-1"},
           {"A": M(2, "foo-0 foo-1", state=UNREV, revoking="foo-1"), "B": M(3, "foo-2"),
            "C": M(3, "", "foo-1", UNREL)})),
        ("A acknowledges, epoch 3, foo-1 released", lambda s: s.converge("A"),
         G(3, 3, "Reconciling", {"A": "foo-0", "B": "foo-2", "C": "foo-1"},
           {"A": M(3, "foo-0"), "B": M(3, "foo-2"), "C": M(3, "", "foo-1", UNREL)})),
        # The KIP's last diagram already shows C with foo-1: that takes C's next heartbeat.
        ("C gets foo-1", lambda s: s.converge("C"),
         G(3, 3, "Stable", {"A": "foo-0", "B": "foo-2", "C": "foo-1"},
           {"A": M(3, "foo-0"), "B": M(3, "foo-2"), "C": M(3, "foo-1")})),
    ])


def _stable_group(s: Scenario, epoch: int, assignment: dict[str, list[int]], subscribe=("foo",)):
    """Reach the KIP's starting point: every member stable at ``epoch`` with ``assignment``."""
    for member in assignment:
        s.consumer_join(member, list(subscribe))
    while s.model.group_epoch < epoch:
        s.metadata_change()
    s.compute_target({m: {"foo": ps} for m, ps in assignment.items()})
    for member in assignment:
        s.converge(member)


def test_incremental_revocation_and_assignment():
    s = Scenario("g")
    _stable_group(s, 21, {"A": [0, 1, 2], "B": [3, 4, 5]})
    check_now(s, G(21, 21, "Stable", {"A": "foo-0 foo-1 foo-2", "B": "foo-3 foo-4 foo-5"},
                   {"A": M(21, "foo-0 foo-1 foo-2"), "B": M(21, "foo-3 foo-4 foo-5")}))
    target = {"A": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"}
    run_case(s, [
        ("C joins", lambda s: s.consumer_join("C", ["foo"]),
         G(22, 21, "Assigning", {"A": "foo-0 foo-1 foo-2", "B": "foo-3 foo-4 foo-5"},
           {"A": M(21, "foo-0 foo-1 foo-2"), "B": M(21, "foo-3 foo-4 foo-5"), "C": M(0)})),
        ("target epoch 22", lambda s: s.compute_target(
            {"A": {"foo": [0, 1]}, "B": {"foo": [3, 4]}, "C": {"foo": [2, 5]}}),
         G(22, 22, "Reconciling", target,
           {"A": M(21, "foo-0 foo-1 foo-2"), "B": M(21, "foo-3 foo-4 foo-5"), "C": M(0)})),
        ("C to epoch 22, waits", lambda s: s.converge("C"),
         G(22, 22, "Reconciling", target,
           {"A": M(21, "foo-0 foo-1 foo-2"), "B": M(21, "foo-3 foo-4 foo-5"),
            "C": M(22, "", "foo-2 foo-5", UNREL)})),
        ("A told to revoke foo-2", lambda s: s.revoke("A"),
         G(22, 22, "Reconciling", target,
           {"A": M(21, "foo-0 foo-1 foo-2", state=UNREV, revoking="foo-2"),
            "B": M(21, "foo-3 foo-4 foo-5"), "C": M(22, "", "foo-2 foo-5", UNREL)})),
        ("B told to revoke foo-5", lambda s: s.revoke("B"),
         G(22, 22, "Reconciling", target,
           {"A": M(21, "foo-0 foo-1 foo-2", state=UNREV, revoking="foo-2"),
            "B": M(21, "foo-3 foo-4 foo-5", state=UNREV, revoking="foo-5"),
            "C": M(22, "", "foo-2 foo-5", UNREL)})),
        ("C heartbeats, no change (no record)", lambda s: s.heartbeat("C"),
         G(22, 22, "Reconciling", target,
           {"A": M(21, "foo-0 foo-1 foo-2", state=UNREV, revoking="foo-2"),
            "B": M(21, "foo-3 foo-4 foo-5", state=UNREV, revoking="foo-5"),
            "C": M(22, "", "foo-2 foo-5", UNREL)})),
        ("A acknowledges, epoch 22", lambda s: s.converge("A"),
         G(22, 22, "Reconciling", target,
           {"A": M(22, "foo-0 foo-1"), "B": M(21, "foo-3 foo-4 foo-5", state=UNREV,
                                             revoking="foo-5"),
            "C": M(22, "", "foo-2 foo-5", UNREL)})),
        ("C gets foo-2, still waits for foo-5", lambda s: s.converge("C"),
         G(22, 22, "Reconciling", target,
           {"A": M(22, "foo-0 foo-1"), "B": M(21, "foo-3 foo-4 foo-5", state=UNREV,
                                             revoking="foo-5"),
            "C": M(22, "foo-2", "foo-5", UNREL)})),
        ("B acknowledges, epoch 22", lambda s: s.converge("B"),
         G(22, 22, "Reconciling", target,
           {"A": M(22, "foo-0 foo-1"), "B": M(22, "foo-3 foo-4"),
            "C": M(22, "foo-2", "foo-5", UNREL)})),
        ("C gets foo-2 and foo-5", lambda s: s.converge("C"),
         G(22, 22, "Stable", target,
           {"A": M(22, "foo-0 foo-1"), "B": M(22, "foo-3 foo-4"), "C": M(22, "foo-2 foo-5")})),
    ])


def test_member_failure():
    s = Scenario("g")
    _stable_group(s, 22, {"A": [0, 1], "B": [3, 4], "C": [2, 5]})
    check_now(s, G(22, 22, "Stable", {"A": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"},
                   {"A": M(22, "foo-0 foo-1"), "B": M(22, "foo-3 foo-4"),
                    "C": M(22, "foo-2 foo-5")}))
    new_target = {"B": "foo-0 foo-3 foo-4", "C": "foo-1 foo-2 foo-5"}
    run_case(s, [
        # The KIP still lists A in the target assignment; a 4.x coordinator writes A's type-7
        # tombstone together with its other tombstones, so A's target is gone.
        ("A fenced after the session timeout", lambda s: s.session_timeout("A"),
         G(23, 22, "Assigning", {"B": "foo-3 foo-4", "C": "foo-2 foo-5"},
           {"B": M(22, "foo-3 foo-4"), "C": M(22, "foo-2 foo-5")})),
        ("target epoch 23", lambda s: s.compute_target(
            {"B": {"foo": [3, 4, 0]}, "C": {"foo": [2, 5, 1]}}),
         G(23, 23, "Reconciling", new_target,
           {"B": M(22, "foo-3 foo-4"), "C": M(22, "foo-2 foo-5")})),
        ("B to epoch 23", lambda s: s.converge("B"),
         G(23, 23, "Reconciling", new_target,
           {"B": M(23, "foo-0 foo-3 foo-4"), "C": M(22, "foo-2 foo-5")})),
        ("C to epoch 23", lambda s: s.converge("C"),
         G(23, 23, "Stable", new_target,
           {"B": M(23, "foo-0 foo-3 foo-4"), "C": M(23, "foo-1 foo-2 foo-5")})),
    ])


def test_partition_added():
    s = Scenario("g")
    _stable_group(s, 22, {"A": [0], "B": []})
    # B's empty target equals the default, so no type-7 record is written for it.
    check_now(s, G(22, 22, "Stable", {"A": "foo-0"}, {"A": M(22, "foo-0"), "B": M(22)}))
    run_case(s, [
        ("foo-1 created: group epoch bumped", lambda s: s.metadata_change(),
         G(23, 22, "Assigning", {"A": "foo-0"}, {"A": M(22, "foo-0"), "B": M(22)})),
        ("target epoch 23", lambda s: s.compute_target({"A": {"foo": [0]}, "B": {"foo": [1]}}),
         G(23, 23, "Reconciling", {"A": "foo-0", "B": "foo-1"}, {"A": M(22, "foo-0"), "B": M(22)})),
        ("A to epoch 23", lambda s: s.converge("A"),
         G(23, 23, "Reconciling", {"A": "foo-0", "B": "foo-1"}, {"A": M(23, "foo-0"), "B": M(22)})),
        ("B to epoch 23 with foo-1", lambda s: s.converge("B"),
         G(23, 23, "Stable", {"A": "foo-0", "B": "foo-1"},
           {"A": M(23, "foo-0"), "B": M(23, "foo-1")})),
    ])


def test_online_migration():
    s = Scenario("g")
    s.classic_rebalance({"A": {"subscribe": ["foo"], "assignment": {"foo": [0, 1]}},
                         "B": {"subscribe": ["foo"], "assignment": {"foo": [3, 4]}},
                         "C": {"subscribe": ["foo"], "assignment": {"foo": [2, 5]}}},
                        generation=22)
    t22 = {"A": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"}
    t23 = {"A": "foo-0 foo-1 foo-3", "C": "foo-2 foo-4 foo-5"}
    t24 = {"A": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"}
    classic = dict(classic=True)
    run_case(s, [
        # "A leaves and rejoins with the new protocol": the group is converted, generation 22
        # becomes the group epoch, target and member assignments come from the classic ones.
        ("A upgrades: group converted", lambda s: s.upgrade_to_consumer("A"),
         G(22, 22, "Stable", t22, {"A": M(22, "foo-0 foo-1"), "B": M(22, "foo-3 foo-4", **classic),
                                   "C": M(22, "foo-2 foo-5", **classic)})),
        # The KIP keeps B in the target; the 4.x removal writes B's type-7 tombstone.
        ("B leaves", lambda s: s.leave("B"),
         G(23, 22, "Assigning", {"A": "foo-0 foo-1", "C": "foo-2 foo-5"},
           {"A": M(22, "foo-0 foo-1"), "C": M(22, "foo-2 foo-5", **classic)})),
        ("target epoch 23 (C must rebalance)", lambda s: s.compute_target(
            {"A": {"foo": [0, 1, 3]}, "C": {"foo": [2, 5, 4]}}),
         G(23, 23, "Reconciling", t23,
           {"A": M(22, "foo-0 foo-1"), "C": M(22, "foo-2 foo-5", **classic)})),
        ("C revokes everything and sends JoinGroup", lambda s: s.heartbeat("C", owned=[]),
         G(23, 23, "Reconciling", t23,
           {"A": M(22, "foo-0 foo-1"), "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        ("A to epoch 23", lambda s: s.converge("A"),
         G(23, 23, "Stable", t23,
           {"A": M(23, "foo-0 foo-1 foo-3"), "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        ("C SyncGroup: nothing written", lambda s: s.heartbeat("C", name="C SyncGroup"),
         G(23, 23, "Stable", t23,
           {"A": M(23, "foo-0 foo-1 foo-3"), "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        ("B rejoins with the new protocol", lambda s: s.consumer_join("B", ["foo"]),
         G(24, 23, "Assigning", t23,
           {"A": M(23, "foo-0 foo-1 foo-3"), "B": M(0),
            "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        # The KIP draws B here with pending-partitions [foo-3, foo-4] at epoch 0; B has not
        # heartbeated yet, so (as in the Basic case) it waits for nothing until it does.
        ("target epoch 24", lambda s: s.compute_target(
            {"A": {"foo": [0, 1]}, "B": {"foo": [3, 4]}, "C": {"foo": [2, 5]}}),
         G(24, 24, "Reconciling", t24,
           {"A": M(23, "foo-0 foo-1 foo-3"), "B": M(0),
            "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        ("A told to revoke foo-3", lambda s: s.revoke("A"),
         G(24, 24, "Reconciling", t24,
           {"A": M(23, "foo-0 foo-1 foo-3", state=UNREV, revoking="foo-3"), "B": M(0),
            "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        ("B to epoch 24, nothing free yet", lambda s: s.converge("B"),
         G(24, 24, "Reconciling", t24,
           {"A": M(23, "foo-0 foo-1 foo-3", state=UNREV, revoking="foo-3"),
            "B": M(24, "", "foo-3 foo-4", UNREL), "C": M(23, "foo-2 foo-4 foo-5", **classic)})),
        ("C rejoins after revoking all: epoch 24, foo-4 released",
         lambda s: s.heartbeat("C", owned=[]),
         G(24, 24, "Reconciling", t24,
           {"A": M(23, "foo-0 foo-1 foo-3", state=UNREV, revoking="foo-3"),
            "B": M(24, "", "foo-3 foo-4", UNREL), "C": M(24, "foo-2 foo-5", **classic)})),
        # The KIP's next diagram already gives B foo-4: that is B's next heartbeat.
        ("B gets foo-4", lambda s: s.converge("B"),
         G(24, 24, "Reconciling", t24,
           {"A": M(23, "foo-0 foo-1 foo-3", state=UNREV, revoking="foo-3"),
            "B": M(24, "foo-4", "foo-3", UNREL), "C": M(24, "foo-2 foo-5", **classic)})),
        ("C SyncGroup: Stable, nothing written", lambda s: s.heartbeat("C", name="C SyncGroup"),
         G(24, 24, "Reconciling", t24,
           {"A": M(23, "foo-0 foo-1 foo-3", state=UNREV, revoking="foo-3"),
            "B": M(24, "foo-4", "foo-3", UNREL), "C": M(24, "foo-2 foo-5", **classic)})),
        ("A confirms revoking foo-3, epoch 24", lambda s: s.converge("A"),
         G(24, 24, "Reconciling", t24,
           {"A": M(24, "foo-0 foo-1"), "B": M(24, "foo-4", "foo-3", UNREL),
            "C": M(24, "foo-2 foo-5", **classic)})),
        ("B gets its assignment", lambda s: s.converge("B"),
         G(24, 24, "Stable", t24,
           {"A": M(24, "foo-0 foo-1"), "B": M(24, "foo-3 foo-4"),
            "C": M(24, "foo-2 foo-5", **classic)})),
    ])
