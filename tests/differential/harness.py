"""The two sides of the differential suite, in one shape: a partition's load as the release's real
classes do it (the oracle's JSON, :mod:`oracle.runner`) and as the audit's model does it
(:func:`jobs.audits.java_load.load`).

A verdict is what an operator acts on: whether the partition loads and, if not, at which record it
stops; how many records of each type the loader skips; which groups survive with which type; and
the committed offsets. :func:`differences` lists where two verdicts disagree, in words.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from decoders.log.segment import iter_partition_dir
from decoders.log.types import RecordBatch
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
        "skipped": dict(Counter(t for _, t in outcome.skipped)),
        "groups": {gid: g.kind for gid, g in state.groups.items()} if outcome.loaded else None,
        "offsets": ({k: v[0] for k, v in state.offsets.items()} if outcome.loaded else None),
        "why": None if outcome.failure is None else f"{outcome.failure.exception}: {outcome.failure.message}",
    }


def oracle_verdict(partition: dict) -> dict:
    loaded = partition["status"] == "loaded"
    failure = partition.get("failure")
    return {
        "loaded": loaded,
        "failed_at": None if failure is None else failure["offset"],
        "skipped": dict(Counter(s["record_type"] for s in partition.get("skipped") or ())),
        "groups": {g["group_id"]: g["type"] for g in partition["groups"]} if loaded else None,
        "offsets": ({(o["group_id"], o["topic"], o["partition"]): o["offset"]
                     for o in partition["offsets"]} if loaded else None),
        "why": None if failure is None else f"{failure['exception']}: {failure['message']}",
    }


def differences(model: dict, oracle: dict) -> list[str]:
    """What differs between two verdicts (``why`` is explanation, not verdict)."""
    out = []
    for name in ("loaded", "failed_at", "skipped", "groups", "offsets"):
        if model[name] != oracle[name]:
            out.append(f"{name}: audit {model[name]!r} != release {oracle[name]!r}")
    if out and (model["why"] or oracle["why"]):
        out.append(f"why: audit {model['why']!r}; release {oracle['why']!r}")
    return out
