"""The two sides of the differential suite, in one shape: a partition's load as the release's real
classes do it (the oracle's JSON, :mod:`oracle.runner`) and as the audit's model does it
(:func:`jobs.audits.java_load.load`).

A verdict is what an operator acts on: whether the partition loads and, if not, at which record
it stops and at which step (reading a marker, deserializing, replaying); how many records of each
type the loader skips; which groups survive with which type; and the committed offsets.
:func:`differences` lists where two verdicts disagree, in words.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from decoders.log.segment import iter_partition_dir
from decoders.log.types import RecordBatch
from jobs.audits.downgrade import BREAK, DROP, audit_facts, java_group_load, split_by_group
from support.partition_dirs import facts_from_partition_dir
from jobs.audits.downgrade_targets import parse_target
from jobs.audits.java_load import LogEntry, load
from jobs.audits.java_releases import JavaRelease

_CONTROL = {0: "ABORT", 1: "COMMIT"}


def partition_dirs(root: str | os.PathLike) -> dict[int, Path]:
    """``{partition: directory}`` of a snapshot root (or of one partition directory)."""
    root = Path(root)
    if root.name.startswith("__consumer_offsets-"):
        return {int(root.name.rsplit("-", 1)[1]): root}
    return {int(d.name.rsplit("-", 1)[1]): d for d in sorted(root.glob("__consumer_offsets-*"))}


def log_entries(directory: str | os.PathLike) -> list[LogEntry]:
    """Every record of one partition directory in log order, as the loader meets them."""
    out = []
    for _, item in iter_partition_dir(directory):
        if not isinstance(item, RecordBatch):
            continue
        for r in item.records:
            if item.is_control:
                if r.control_type in _CONTROL:
                    out.append(LogEntry(r.offset, item.producer_id, _CONTROL[r.control_type], None, None))
            else:
                out.append(LogEntry(r.offset, item.producer_id, None, r.key, r.value))
    return out


def model_verdict(directory: str | os.PathLike, release: JavaRelease) -> dict:
    outcome = load(log_entries(directory), release)
    state = outcome.state
    return {
        "loaded": outcome.loaded,
        "failed_at": None if outcome.failure is None else outcome.failure.offset,
        "failure_stage": None if outcome.failure is None else outcome.failure.stage,
        "skipped": dict(Counter(t for _, t in outcome.skipped)),
        "groups": {gid: g.kind for gid, g in state.groups.items()} if outcome.loaded else None,
        "offsets": ({k: v[0] for k, v in state.offsets.items()} if outcome.loaded else None),
        "why": None if outcome.failure is None else f"{outcome.failure.exception}: {outcome.failure.message}",
    }


_STAGE_OF_RULE = {"DU-2": "deserialize", "DU-3": "deserialize", "DU-4": "replay"}


def target_name(release: JavaRelease) -> str:
    """The ``--target-version`` an operator writes for this release's Java coordinator."""
    return release.version + ("+new-coordinator" if release.release < (4, 0, 0) else "")


def audit_verdict(directory: str | os.PathLike, release: JavaRelease, facts=None) -> dict:
    """The verdict the audit gives (``offsetlake audit --target-version``): its findings for the
    partition, and the groups and offsets of the per-group loads it follows. ``facts``: the
    partition's :func:`facts_from_partition_dir`, when the caller already has them."""
    target = parse_target(target_name(release))
    facts = facts_from_partition_dir(directory) if facts is None else facts
    findings = audit_facts(facts, [target.name])
    breaks = sorted((f for f in findings if f.klass == BREAK), key=lambda f: f.offset)
    failure = breaks[0] if breaks else None
    stop = None if failure is None else failure.offset
    skipped = Counter(f.record_type for f in findings if f.rule_id == "DU-1" and f.klass == DROP
                      and (stop is None or f.offset < stop))
    verdict = {"loaded": failure is None, "failed_at": stop,
               "failure_stage": None if failure is None else (
                   "control" if failure.record_type is None and failure.rule_id == "DU-4"
                   else _STAGE_OF_RULE[failure.rule_id]),
               "skipped": dict(skipped), "groups": None, "offsets": None,
               "why": None if failure is None else failure.detail}
    if failure is None:
        groups, offsets = {}, {}
        for records in split_by_group(facts).values():
            state = java_group_load(records, target).state
            groups.update({gid: g.kind for gid, g in state.groups.items()})
            offsets.update({k: v[0] for k, v in state.offsets.items()})
        verdict.update(groups=groups, offsets=offsets)
    return verdict


def oracle_verdict(partition: dict) -> dict:
    loaded = partition["status"] == "loaded"
    failure = partition.get("failure")
    return {
        "loaded": loaded,
        "failed_at": None if failure is None else failure["offset"],
        "failure_stage": None if failure is None else failure["stage"],
        "skipped": dict(Counter(s["record_type"] for s in partition.get("skipped") or ())),
        "groups": {g["group_id"]: g["type"] for g in partition["groups"]} if loaded else None,
        "offsets": ({(o["group_id"], o["topic"], o["partition"]): o["offset"]
                     for o in partition["offsets"]} if loaded else None),
        "why": None if failure is None else f"{failure['exception']}: {failure['message']}",
    }


def differences(model: dict, oracle: dict) -> list[str]:
    """What differs between two verdicts (``why`` is explanation, not verdict)."""
    out = []
    for name in ("loaded", "failed_at", "failure_stage", "skipped", "groups", "offsets"):
        if model[name] != oracle[name]:
            out.append(f"{name}: audit {model[name]!r} != release {oracle[name]!r}")
    if out and (model["why"] or oracle["why"]):
        out.append(f"why: audit {model['why']!r}; release {oracle['why']!r}")
    return out
