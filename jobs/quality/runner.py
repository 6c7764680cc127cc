"""Run the suites of :mod:`jobs.quality.suites` with great-expectations on Spark DataFrames.

An ephemeral great-expectations context (nothing to set up, nothing left behind but the HTML):
one Spark data source, one DataFrame asset per suite, the Data Docs site under
``<report dir>/quality/data_docs``. The outcome is also written as plain JSON
(``<report dir>/quality/<snapshot_id>.json``) for the report and for scripts.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jobs.quality.suites import Suite

UNEXPECTED_EXAMPLES = 5


@dataclass
class Outcome:
    suite: str
    expectation: str
    column: str | None
    success: bool
    element_count: int | None = None
    unexpected_count: int | None = None
    observed: object = None
    unexpected_examples: list = field(default_factory=list)


@dataclass
class QualityResult:
    snapshot_id: str
    outcomes: list[Outcome]
    data_docs: str | None

    @property
    def success(self) -> bool:
        return all(o.success for o in self.outcomes)

    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.success]

    def to_json(self) -> str:
        return json.dumps({"snapshot_id": self.snapshot_id, "success": self.success,
                           "data_docs": self.data_docs,
                           "outcomes": [asdict(o) for o in self.outcomes]}, indent=1, default=str)


def load_result(path: Path) -> dict | None:
    """A result written by :func:`run_quality`, or None when there is none."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def result_path(report_dir: Path, snapshot_id: str) -> Path:
    return Path(report_dir) / "quality" / f"{snapshot_id}.json"


def _context(docs_dir: Path):
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    context.add_data_docs_site("offsetlake", {
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                          "base_directory": str(docs_dir)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    })
    return context


def _plain(value):
    """numpy scalars (pandas batches) as Python values, so the JSON result keeps numbers."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (list, dict)) else value


def _outcomes(suite: Suite, validation) -> list[Outcome]:
    outcomes = []
    for item in validation.results:
        config, result = item.expectation_config, item.result or {}
        outcomes.append(Outcome(
            suite=suite.name, expectation=config.type, column=config.kwargs.get("column"),
            success=bool(item.success), element_count=result.get("element_count"),
            unexpected_count=result.get("unexpected_count"),
            observed=_plain(result.get("observed_value")),
            unexpected_examples=[_plain(v) for v in
                                 list(result.get("partial_unexpected_list") or [])[:UNEXPECTED_EXAMPLES]]))
    return outcomes


def _example_rows(spark, suite: Suite, outcome: Outcome) -> list[dict]:
    """Whole rows of a failed boolean check, so the output names the offending keys."""
    column = outcome.column
    if outcome.success or not column or not column.startswith(("is_", "has_")):
        return outcome.unexpected_examples
    rows = spark.sql(suite.query).where(f"not coalesce({column}, false)").limit(UNEXPECTED_EXAMPLES)
    return [r.asDict() for r in rows.collect()]


def _batch(context, sources: dict, suite: Suite, df, pandas_max_rows: int):
    """The batch definition and parameters of a suite's dataset: in pandas when it has at most
    ``pandas_max_rows`` rows (great-expectations runs a Spark job per metric, which costs more than
    the whole dataset on a small snapshot), on Spark otherwise."""
    if df.count() <= pandas_max_rows:
        kind, frame = "pandas", df.toPandas()
    else:
        kind, frame = "spark", df
    if kind not in sources:
        add = context.data_sources.add_pandas if kind == "pandas" else context.data_sources.add_spark
        sources[kind] = add(f"lake-{kind}")
    batch = sources[kind].add_dataframe_asset(suite.name).add_batch_definition_whole_dataframe("all")
    return batch, {"dataframe": frame}


def run_quality(spark, suites: list[Suite], snapshot_id: str, report_dir: Path,
                pandas_max_rows: int = 0) -> QualityResult:
    """Validate every suite on the registered catalog; writes Data Docs and the JSON result."""
    import great_expectations as gx
    import great_expectations.expectations as gxe

    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    docs_dir = Path(report_dir) / "quality" / "data_docs"
    context = _context(docs_dir)
    outcomes: list[Outcome] = []
    sources: dict = {}
    for suite in suites:
        # Cached: great-expectations computes each metric with its own Spark job.
        df = spark.sql(suite.query).cache()
        batch, parameters = _batch(context, sources, suite, df, pandas_max_rows)
        gx_suite = context.suites.add(gx.ExpectationSuite(name=suite.name))
        for expectation in suite.expectations:
            gx_suite.add_expectation(getattr(gxe, expectation.kind)(**expectation.kwargs))
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name=f"{suite.name}-{snapshot_id}", data=batch, suite=gx_suite))
        found = _outcomes(suite, definition.run(batch_parameters=parameters))
        for outcome in found:
            outcome.unexpected_examples = _example_rows(spark, suite, outcome)
        outcomes.extend(found)
        df.unpersist()
    context.build_data_docs()
    index = docs_dir / "index.html"
    result = QualityResult(snapshot_id, outcomes, str(index) if index.exists() else None)
    path = result_path(report_dir, snapshot_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.to_json())
    return result
