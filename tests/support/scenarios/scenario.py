"""The scenario builder: declarative steps → the records a 4.x group coordinator writes.

Example::

    s = (Scenario("g")
         .consumer_join("A", subscribe=["foo"])
         .compute_target({"A": {"foo": [0, 1, 2]}})
         .converge("A")
         .offset_commit({"foo": {0: 42}}))
    replay_group(s.events())              # decoded events, no files
    s.write(tmp_path)                      # tmp_path/__consumer_offsets-0/000…0.log
    replay_group(s.events(through_step=1)) # the log as it was after the second step
    s.compacted().events()                 # what the log cleaner would leave

Every record goes through the codec (encoded, then decoded for ``events()``) and through the
segment writer for ``write()``. Several groups share the partition: ``.group("h")`` switches.
"""

from __future__ import annotations

from support.scenarios.base import ScenarioBase
from support.scenarios.classic_steps import ClassicSteps
from support.scenarios.consumer_steps import ConsumerSteps
from support.scenarios.offset_steps import OffsetSteps


class Scenario(ConsumerSteps, ClassicSteps, OffsetSteps, ScenarioBase):
    """See the module docstring; steps return the scenario so they chain."""
