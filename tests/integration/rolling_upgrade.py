"""One broker's log directory carried through a rolling upgrade, so that one ``__consumer_offsets``
log holds records written by each release's group coordinator.

:func:`upgraded_broker` formats a single-node KRaft broker of the first release of
``<rolling.versions>`` (``build/kafka/pom.xml``: 3.9.2, its Java group coordinator switched on,
:data:`kafka_broker.NEW_COORDINATOR_3X`), and for each release in turn: starts that release's
broker on the same data directory (no new format: the metadata log and every partition carry
over), raises the cluster's features to the release's (``kafka-features upgrade
--release-version``, as an operator finishing an upgrade does), runs the workloads that release
supports under a group prefix of its own (``r392-...``), waits until they settle, closes every
member (they leave their groups) and stops the broker. It ends by starting the last writer
release (4.4.0) on that directory, features raised, and returns it running: the caller runs the
full workloads on it and takes the snapshot (``test_admin_crosscheck.py``'s ``rolling`` pass).

What each release runs (:func:`scenarios_of`): 3.9's KIP-848 support is early access (no group
configurations, no ConsumerGroupDescribe the workloads can wait on), so 3.9.2 runs the classic
groups, the transactions and the offset deletion; 4.0 and 4.1 everything but the share group
(4.1's share groups are a preview the client's ShareGroupHeartbeat version does not match); 4.2
on everything; from 4.0 on also a regex subscription, the last release included.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .kafka_broker import (NEW_COORDINATOR_3X, POM, KafkaBroker, kafka_version, release_of,
                           writer_versions)
from .workloads import Workloads

FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"
CLASSIC_ONLY = ("classic_kafka_python", "classic_confluent", "transactions", "offset_deletion")


def rolling_versions() -> tuple[str, ...]:
    match = re.search(r"<rolling\.versions>([^<]+)</rolling\.versions>", POM.read_text())
    return tuple(match.group(1).split()) if match else ()


def final_version() -> str:
    return (writer_versions() or (kafka_version(),))[-1]


def scenarios_of(version: str) -> tuple[str, ...]:
    """The workloads a release runs here: every scenario it supports, plus a regex subscription
    (``consumer_regex``: type 16 records) from 4.0 on."""
    release = release_of(version)
    if release < (4, 0):
        return CLASSIC_ONLY
    if release < (4, 2):
        return (*(s for s in Workloads.SCENARIOS if s != "share_group"), "consumer_regex")
    return (*Workloads.SCENARIOS, "consumer_regex")


def prefix_of(version: str) -> str:
    return "r" + version.replace(".", "")


def _start(work_dir: Path, version: str, first: bool) -> KafkaBroker:
    overrides = dict(NEW_COORDINATOR_3X) if release_of(version) < (4, 0) else {}
    broker = KafkaBroker(work_dir, version=None if version == kafka_version() else version,
                         overrides=overrides)
    broker.start(format_storage=first)
    if not first:
        broker.run_tool(FEATURE_COMMAND, "--bootstrap-server", broker.bootstrap_server,
                        "upgrade", "--release-version", ".".join(version.split(".")[:2]))
    return broker


def upgraded_broker(work_dir: Path, progress=sys.stderr) -> tuple[KafkaBroker, list[dict]]:
    """The last writer release's broker, running on a log directory every release of
    :func:`rolling_versions` wrote to; and the scenarios those releases ran (with ``release``)."""
    ran: list[dict] = []
    for i, version in enumerate(rolling_versions()):
        broker = _start(work_dir, version, first=i == 0)
        try:
            print(f"rolling upgrade: Kafka {version} at {broker.bootstrap_server}", file=progress)
            with Workloads(broker.bootstrap_server, prefix=prefix_of(version)) as wl:
                if i == 0:
                    wl.create_topics()
                for name in scenarios_of(version):
                    getattr(wl, name)()
                wl.wait_settled()
                ran += [dict(s, release=version) for s in wl.scenarios]
        finally:
            broker.stop()
    broker = _start(work_dir, final_version(), first=not rolling_versions())
    print(f"rolling upgrade: Kafka {final_version()} at {broker.bootstrap_server}", file=progress)
    return broker, ran
