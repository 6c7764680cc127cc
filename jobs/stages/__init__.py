"""Spark stages: ``DataFrame -> DataFrame`` functions and the Arrow bodies executors run.

ingest (snapshot -> ``raw_records``) -> decode (-> ``records``) -> replay (-> group tables);
:mod:`jobs.stages.pipeline` orders them. Everything executors run is plain pyarrow over
``decoders`` and :mod:`jobs.replay`, testable without Spark.
"""
