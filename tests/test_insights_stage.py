"""The insight rules' plumbing (jobs/stages/insights.py): rule files run over one snapshot's views
with the `settings` row, and rows that break the findings contract are refused with the file named."""

from __future__ import annotations

import pytest

from jobs.lake.findings import FINDINGS_COLUMNS
from jobs.lake.views import SETTINGS
from jobs.runtime.config import load_section
from jobs.stages.insights import InsightRuleError, insight_findings
from support.lake_fixture import write_lake

COLUMNS = ", ".join(name for name, _, _ in FINDINGS_COLUMNS)


def rule_sql(severity: str = "'low'", rule_id: str = "GH-01", extra: str = "") -> str:
    """A rule over `groups` that names each group, with the retention setting in its details."""
    return f"""
        select snapshot_id, '{rule_id}' as rule_id, {severity} as severity, 'violation' as verdict,
               group_id, cast(null as string) as member_id, cast(null as string) as topic,
               cast(null as string) as topic_id, cast(null as int) as partition, log_partition,
               log_offset, array(log_offset) as evidence_log_offsets,
               concat('group ', group_id) as message,
               to_json(named_struct('retention_ms', s.offsets_retention_ms)) as details {extra}
        from groups cross join settings as s"""


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    return write_lake(spark, tmp_path_factory.mktemp("insights") / "lake", {"groups": [
        dict(snapshot_id="s1", group_id="g1", log_partition=0, log_offset=4),
        dict(snapshot_id="s1", group_id="g2", log_partition=1, log_offset=9),
        dict(snapshot_id="s0", group_id="g-old", log_partition=0, log_offset=1)]})


def run(spark, lake, tmp_path, files: dict[str, str], **kwargs):
    rules = tmp_path / "rules"
    rules.mkdir(exist_ok=True)
    for name, text in files.items():
        (rules / f"{name}.sql").write_text(text)
    return insight_findings(spark, lake, "s1", rules_dir=rules, **kwargs)


def test_a_rule_reads_only_the_audited_snapshot_with_the_settings(spark, lake, tmp_path):
    df = run(spark, lake, tmp_path, {"GH-01": rule_sql()},
             settings={"offsets_retention_minutes": 2})
    rows = sorted((r.asDict() for r in df.collect()), key=lambda r: r["group_id"])
    assert [r["group_id"] for r in rows] == ["g1", "g2"]
    assert rows[0] == dict(snapshot_id="s1", rule_id="GH-01", severity="low", verdict="violation",
                           group_id="g1", member_id=None, topic=None, topic_id=None,
                           partition=None, log_partition=0, log_offset=4,
                           evidence_log_offsets=[4], message="group g1",
                           details='{"retention_ms":120000}')


def test_an_info_finding_is_a_notice(spark, lake, tmp_path):
    df = run(spark, lake, tmp_path, {"GH-01": rule_sql("'info'")})
    assert {r.verdict for r in df.collect()} == {"notice"}


def test_a_severity_above_the_rules_is_refused(spark, lake, tmp_path):
    df = run(spark, lake, tmp_path, {"GH-01": rule_sql("'high'")})
    with pytest.raises(Exception, match=r"GH-01: severity high is not one of \['info', 'low'\]"):
        df.collect()


def test_wrong_columns_are_refused_with_the_file(spark, lake, tmp_path):
    with pytest.raises(InsightRuleError, match=r"GH-01\.sql: columns .*'extra'"):
        run(spark, lake, tmp_path, {"GH-01": rule_sql(extra=", 1 as extra")})


def test_a_file_for_an_unknown_rule_is_refused(spark, lake, tmp_path):
    with pytest.raises(InsightRuleError, match="rule XX-09 is not in the registry"):
        run(spark, lake, tmp_path, {"XX-09": rule_sql(rule_id="XX-09")})


def test_no_rule_files_no_findings(spark, lake, tmp_path):
    assert run(spark, lake, tmp_path, {}) is None


def test_conf_holds_every_setting_at_the_code_default():
    """conf/offsetlake.yaml's insights section and the defaults for a file without it agree."""
    section = load_section("insights")
    assert {key: str(section[key]) if scale is None else float(section[key])
            for _, key, scale, _ in SETTINGS} == \
        {key: str(default) if scale is None else float(default)
         for _, key, scale, default in SETTINGS}


def test_a_view_may_read_a_view_later_in_name_order(spark, lake, tmp_path):
    """`a_first` reads `b_second`: registered after it; a view reading nothing that exists fails
    with Spark's own error, not a silent gap."""
    from pyspark.errors import AnalysisException

    from jobs.lake.views import register_lake

    views = tmp_path / "sql"
    views.mkdir()
    (views / "a_first.sql").write_text("select group_id from b_second where group_id <> 'g2'")
    (views / "b_second.sql").write_text("select group_id from groups")
    catalog = register_lake(spark, lake, "s1", sql_dir=views)
    assert catalog.views == ["settings", "b_second", "a_first"]
    assert [r.group_id for r in spark.sql("select * from a_first").collect()] == ["g1"]
    (views / "c_broken.sql").write_text("select * from no_such_view")
    with pytest.raises(AnalysisException, match="no_such_view"):
        register_lake(spark, lake, "s1", sql_dir=views)
