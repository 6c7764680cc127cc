"""`offsetlake quality`: the great-expectations suites pass on the real sample and name exactly
the rows a deliberately broken copy of it gets wrong; Data Docs land in the lake's report dir."""

from __future__ import annotations

import json
import shutil

import pytest

from jobs.cli import main as offsetlake
from jobs.lake.delta import read_snapshot, replace_snapshot
from jobs.quality.suites import suites
from support.lake_fixture import sample_lake

SNAPSHOT = "kafka-4.3.1"


def result(lake) -> dict:
    return json.loads((lake / "_reports" / "quality" / f"{SNAPSHOT}.json").read_text())


@pytest.fixture(scope="module")
def sample(spark, tmp_path_factory):
    return sample_lake(spark, tmp_path_factory)


def test_quality_passes_on_the_sample(sample, capsys):
    assert offsetlake(["quality", "--lake", str(sample)]) == 0
    out = capsys.readouterr().out
    got = result(sample)
    expected = sum(len(s.expectations) for s in suites(0.001))
    assert got["success"] and len(got["outcomes"]) == expected
    assert {o["suite"] for o in got["outcomes"]} >= {"member_epoch_order", "assignment_epochs",
                                                     "snapshot_accounting", "records"}
    # The cross-table checks looked at real rows, not at nothing.
    checked = {o["suite"]: o["element_count"] for o in got["outcomes"]}
    assert checked["member_epoch_order"] > 0 and checked["assignment_epochs"] > 0
    docs = sample / "_reports" / "quality" / "data_docs" / "index.html"
    assert docs.is_file() and "member_epoch_order" in docs.read_text()
    assert f"quality {SNAPSHOT}: {expected}/{expected} expectations met" in out


def test_quality_fails_on_deliberately_broken_rows(spark, sample, tmp_path, capsys, monkeypatch):
    """On great-expectations' Spark engine (the sample test above ran the small-table pandas path)."""
    from pyspark.sql import functions as F

    monkeypatch.setenv("OFFSETLAKE_QUALITY__PANDAS_MAX_ROWS", "0")
    lake = tmp_path / "lake"
    shutil.copytree(sample, lake, ignore=shutil.ignore_patterns("_reports"))
    members = read_snapshot(spark, lake, "members", SNAPSHOT).cache()
    victim = members.where("group_id = 'wl-consumer'").first().member_id
    broken = members.withColumn("member_epoch", F.when(F.col("member_id") == victim, F.lit(99))
                                .otherwise(F.col("member_epoch")))
    replace_snapshot(broken, lake, "members", SNAPSHOT)
    offsets = read_snapshot(spark, lake, "offsets", SNAPSHOT).cache()
    replace_snapshot(offsets.unionByName(offsets.limit(1).withColumn("topic", F.lit(None).cast("string"))),
                     lake, "offsets", SNAPSHOT)
    records = read_snapshot(spark, lake, "records", SNAPSHOT).cache()
    first = records.orderBy("partition", "offset").first()
    replace_snapshot(records.where(f"not (partition = {first.partition} and offset = {first.offset})"),
                     lake, "records", SNAPSHOT)

    assert offsetlake(["quality", "--lake", str(lake)]) == 1
    failed = {(o["suite"], o["column"]): o for o in result(lake)["outcomes"] if not o["success"]}
    assert set(failed) == {("member_epoch_order", "is_in_epoch_order"), ("offsets", "topic"),
                           ("snapshot_accounting", "unaccounted_record_count")}
    [example] = failed[("member_epoch_order", "is_in_epoch_order")]["unexpected_examples"]
    assert (example["group_id"], example["member_id"], example["member_epoch"]) == \
        ("wl-consumer", victim, 99)
    assert failed[("offsets", "topic")]["unexpected_count"] == 1
    assert failed[("snapshot_accounting", "unaccounted_record_count")]["unexpected_examples"] == [1]
    assert "FAIL member_epoch_order" in capsys.readouterr().out
