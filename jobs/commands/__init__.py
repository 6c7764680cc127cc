"""The CLI's commands: one module each, ``add_arguments(parser)`` and ``run(args) -> int``.

Cheap to import: a command imports Spark, numpy or the decoders inside ``run``, never at module
level, so ``offsetlake --help`` stays fast. Modules with a ``main`` are also spark-submit entry
points (``spark-submit jobs/commands/run.py ...``).
"""
