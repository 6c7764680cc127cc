"""Scenario builder (library for tests, benchmarks and audits): see :mod:`support.scenarios.scenario`."""

from support.scenarios.base import CompactedView, Step, default_topic_id
from support.scenarios.model import ScenarioError
from support.scenarios.scenario import Scenario

__all__ = ["Scenario", "CompactedView", "Step", "ScenarioError", "default_topic_id"]
