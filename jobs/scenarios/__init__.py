"""Scenario builder (library for tests, benchmarks and audits): see :mod:`jobs.scenarios.scenario`."""

from jobs.scenarios.base import CompactedView, Step, default_topic_id
from jobs.scenarios.model import ScenarioError
from jobs.scenarios.scenario import Scenario

__all__ = ["Scenario", "CompactedView", "Step", "ScenarioError", "default_topic_id"]
