"""Random valid histories: the replayed state equals the scenario builder's writer-side model (two
independent implementations: record writer vs. record replay), replay finds no violation, and the
compacted log replays to the same final tables."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.replay import replay_group
from support.scenarios import Scenario

MEMBERS = ["A", "B", "C", "D"]
PARTITIONS = list(range(6))
FINAL = ("groups", "members", "member_assignments", "target_assignments", "offsets")
STATE_NAMES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS"}


def apply(s: Scenario, draw) -> None:
    g = s.model
    live = [m for m in g.members if g.members[m].member_epoch != -2]
    action = draw(st.sampled_from(["join", "target", "heartbeat", "converge", "revoke", "leave",
                                   "static_leave", "rejoin", "commit", "txn"]))
    new = next((m for m in MEMBERS if m not in g.members and
                all(x.instance_id != f"i-{m}" for x in g.members.values())), None)
    if action == "join" and new is not None:
        s.consumer_join(new, ["foo"], instance_id=draw(st.sampled_from([None, f"i-{new}"])))
    elif action == "target" and g.members:
        if g.group_epoch <= g.target_epoch:
            s.metadata_change()
        owners = draw(st.lists(st.sampled_from(list(g.members)), min_size=len(PARTITIONS),
                               max_size=len(PARTITIONS)))
        s.compute_target({m: {"foo": [p for p, o in zip(PARTITIONS, owners) if o == m]}
                          for m in g.members})
    elif action in ("heartbeat", "converge") and live:
        getattr(s, action)(draw(st.sampled_from(live)))
    elif action == "revoke" and live:
        member = draw(st.sampled_from(live))
        m = g.members[member]
        if set(m.assigned) - g.target.get(member, set()) and m.state != 1:
            s.revoke(member)
    elif action == "leave" and live:
        s.leave(draw(st.sampled_from(live)))
    elif action == "static_leave":
        static = [m for m in live if g.members[m].instance_id]
        if static:
            s.static_leave(draw(st.sampled_from(static)))
    elif action == "rejoin":
        gone = [m for m in g.members if g.members[m].member_epoch == -2]
        free = [m for m in MEMBERS if m not in g.members]
        if gone and free:
            s.static_rejoin(free[0], g.members[gone[0]].instance_id)
    elif action == "commit":
        s.offset_commit({"foo": {draw(st.sampled_from(PARTITIONS)): draw(st.integers(0, 99))}})
    elif action == "txn":
        s.transactional_commit(draw(st.integers(1, 3)), {"foo": {draw(st.sampled_from(PARTITIONS)): 1}},
                               outcome=draw(st.sampled_from(["COMMIT", "ABORT"])))


def model_view(s: Scenario) -> dict:
    g = s.model
    tid = s.topic_id
    return {"group_epoch": g.group_epoch, "target_epoch": g.target_epoch,
            "targets": {m: {(tid(t), p) for t, p in ps} for m, ps in g.target.items() if ps},
            "members": {mid: (m.member_epoch, m.previous_member_epoch, STATE_NAMES[m.state],
                              {(tid(t), p): e for (t, p), e in m.assigned.items()},
                              {(tid(t), p): e for (t, p), e in m.pending_revocation.items()})
                        for mid, m in g.members.items()}}


def replay_view(result) -> dict:
    group = result.group("g")
    return {"group_epoch": group.group_epoch, "target_epoch": group.target_assignment_epoch,
            "targets": {m: t.partitions for m, t in group.target.items() if t.partitions},
            "members": {mid: (m.member_epoch, m.previous_member_epoch, m.member_state,
                              {tp: a.assignment_epoch for tp, a in m.assigned.items()},
                              {tp: a.assignment_epoch for tp, a in m.pending_revocation.items()})
                        for mid, m in group.members.items()}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_replay_matches_the_writer_model_and_compaction(data):
    s = Scenario("g").consumer_join("A", ["foo"])
    for _ in range(data.draw(st.integers(1, 25))):
        apply(s, data.draw)
    result = replay_group(s.events(), topic_names=s.topic_names)
    assert [v for v in result.violations if v["rule_id"] != "TX-02"] == []
    assert replay_view(result) == model_view(s)
    # topic ids come from cluster metadata: compaction may remove the record that named them
    compacted = replay_group(s.compacted().events(), topic_names=s.topic_names)
    assert {n: compacted.tables[n] for n in FINAL} == {n: result.tables[n] for n in FINAL}
