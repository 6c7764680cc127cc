"""A guard for a rejoin race in kafka-python 3.0.12's classic group member (test clients only).

What happens, seen with kafka-python's debug log on a loaded machine (two busy cores made it
happen in 2 of 10 single-member joins, and in 7 of 8 runs of the whole workload set):

1. The member leads its group. Topic metadata arrives after its first join, so
   ``ConsumerCoordinator.need_rejoin()`` turns true (the assignment snapshot differs from the
   metadata snapshot) and ``join_group_async`` sends JoinGroup as a task.
2. ``KafkaConsumer.poll(timeout_ms=...)`` runs out of time while that task is in flight;
   kafka-python keeps the task for the next poll to await.
3. The task completes in between: as leader it computed the assignment, which updated the
   assignment snapshot. On the next poll ``need_rejoin()`` is false again (the base class flag
   was never set), so ``join_group_async`` never awaits the finished task: heartbeats stay
   disabled and the member never takes its partitions. The broker removes it when its session
   times out, and a workload waiting for a Stable group times out.

The guard makes ``need_rejoin()`` true while a join task is outstanding (``_join_task`` is set
until ``join_group_async`` has consumed it), so the next poll goes back into the join loop. A task
that already finished is replaced by a fresh JoinGroup there: one extra generation, then the
member is Stable with its partitions and heartbeating. That needs a poll timeout longer than a
JoinGroup + SyncGroup round trip (the workloads poll for 50 ms, the fixtures 200 ms, the guard's
test 5 ms); at 1 ms each fresh join finishes between polls too. The product's own use of kafka-python (the
capture reader) assigns partitions and never joins a group, so it is not affected.
"""

from __future__ import annotations

from kafka.coordinator.consumer import ConsumerCoordinator


def guard_rejoin() -> None:
    """Install the guard once per process (idempotent)."""
    original = ConsumerCoordinator.need_rejoin
    if getattr(original, "offsetlake_rejoin_guard", False):
        return

    def need_rejoin(self) -> bool:
        if getattr(self, "_join_task", None) is not None:
            return True
        return original(self)

    need_rejoin.offsetlake_rejoin_guard = True
    ConsumerCoordinator.need_rejoin = need_rejoin
