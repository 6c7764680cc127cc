"""Seeded, property-based generator of ``__consumer_offsets`` logs, with compaction and a shrinker.

See :mod:`support.loggen.generator` (``generate`` and its knobs), :mod:`support.loggen.shrink`
(``shrink``, ``save_case``, ``load_case``), :mod:`support.loggen.compaction` (the log cleaner
model) and :mod:`support.loggen.shapes` (what a log holds, read from its records).
"""

from support.loggen.generator import Knobs, generate
from support.loggen.log import GeneratedLog
from support.loggen.shapes import content_shapes
from support.loggen.shrink import load_case, save_case, shrink

__all__ = ["GeneratedLog", "Knobs", "content_shapes", "generate", "load_case", "save_case",
           "shrink"]
