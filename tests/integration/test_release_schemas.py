"""The coordinator record schemas each release ships (the JSON files inside its
``kafka-group-coordinator`` jar, from Maven Central via ``build/kafka/fetch.sh``) agree with our
catalog.

* The suite's broker release and every newer writer release (4.3.1, 4.4.0): every schema in the
  jar is compared field by field with the catalog (names, types, versions, nullability, tags,
  defaults: the comparison of ``tests/test_codec_schemas_agree.py``), and the jar writes no
  record type the catalog lacks. A release that changes a record's layout fails here until the
  codec knows it. The one difference allowed: a tagged field the catalog reads that an earlier
  release does not have yet (:data:`LATER_TAGS`, with the release that added it).
* The older releases the downgrade comparison starts (3.7.2 ... 4.2.1): each schema's record
  type, name and valid versions are known to the catalog (their layouts are the historical ones,
  compared against Kafka's own files in ``tests/kafka_schemas/historical``).
"""

from __future__ import annotations

import dataclasses
import json
import re
import zipfile

import pytest

import test_codec_schemas_agree as agree
from decoders.records_catalog import RECORD_TYPES
from decoders.schema import Struct, Versions

from .kafka_broker import (KafkaJarsMissing, downgrade_versions, kafka_libs_dir, kafka_version,
                           release_of, writer_versions)

CURRENT = (kafka_version(), *writer_versions())


def release_schemas(version: str) -> dict[str, dict]:
    """``{file name: schema}`` of the coordinator records in the release's group-coordinator
    jar (Kafka's JSON allows ``//`` comments; they are dropped)."""
    try:
        libs = kafka_libs_dir(version)
    except KafkaJarsMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    jar = libs / f"kafka-group-coordinator-{version}.jar"
    schemas = {}
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                text = re.sub(r"^\s*//.*$", "", z.read(name).decode(), flags=re.M)
                schemas[name.rsplit("/", 1)[1]] = json.loads(text)
    assert schemas, f"no coordinator record schemas in {jar}"
    return schemas


# Tagged fields added to a record without a new version: (record, field) -> first release.
LATER_TAGS = {("StreamsGroupMetadataValue", "StoredDescriptionTopologyEpoch"): (4, 4),
              ("StreamsGroupMetadataValue", "FailedDescriptionTopologyEpoch"): (4, 4)}


def _ours(doc: dict):
    rt = RECORD_TYPES[doc["apiKey"]]
    if doc["type"] == "coordinator-key":
        return rt.key, Versions.parse("0"), Versions.parse("none")
    return rt.value, rt.valid_versions, rt.flexible_versions


def _as_of(struct: Struct, version: str) -> Struct:
    """The catalog's struct without the tagged fields ``version`` predates."""
    release = release_of(version)
    kept = tuple(f for f in struct.fields
                 if release >= LATER_TAGS.get((struct.name, f.name), (0,)))
    return dataclasses.replace(struct, fields=kept)


@pytest.mark.parametrize("version", CURRENT)
def test_every_record_schema_of_the_release_is_the_catalogs(version):
    schemas = release_schemas(version)
    for name, doc in sorted(schemas.items()):
        where = f"{version}:{name}"
        assert doc["type"] in ("coordinator-key", "coordinator-value"), where
        assert doc["apiKey"] in RECORD_TYPES, f"{where}: record type {doc['apiKey']} unknown"
        ours, valid, flexible = _ours(doc)
        assert ours.name == doc["name"], where
        assert valid == Versions.parse(doc["validVersions"]), where
        versions = range(valid.lo, valid.hi + 1)
        their_flexible = Versions.parse(doc["flexibleVersions"])
        assert [v in flexible for v in versions] == [v in their_flexible for v in versions], where
        agree._COMMON.clear()
        agree._COMMON.update({s["name"]: s["fields"] for s in doc.get("commonStructs", [])})
        agree._compare(_as_of(ours, version), doc["fields"], versions, where)


@pytest.mark.parametrize("version", CURRENT)
def test_the_release_writes_each_record_type_the_catalog_expects_of_it(version):
    """Types 9 and 18 were removed before 4.0 shipped them; 24 is on no release yet."""
    types = {doc["apiKey"] for doc in release_schemas(version).values()}
    assert types == set(RECORD_TYPES) - {9, 18, 24}, version
    assert {RECORD_TYPES[t].status for t in (9, 18, 24)} == {"removed", "unverified"}


@pytest.mark.parametrize("version", downgrade_versions())
def test_older_release_schemas_are_known_to_the_catalog(version):
    """Before 4.0 a key's version was its record type and schemas had no ``apiKey``."""
    names = {s.name: (t, kind) for t, rt in RECORD_TYPES.items()
             for kind, s in (("key", rt.key), ("value", rt.value))}
    for name, doc in sorted(release_schemas(version).items()):
        where = f"{version}:{name}"
        assert doc["name"] in names, where
        record_type, kind = names[doc["name"]]
        theirs = Versions.parse(doc["validVersions"])
        if "apiKey" in doc:
            assert doc["apiKey"] == record_type, where
        if kind == "key" and "apiKey" not in doc:   # OffsetCommitKey served types 0 and 1
            expected = (0, 1) if doc["name"] == "OffsetCommitKey" else (record_type, record_type)
            assert (theirs.lo, theirs.hi) == expected, where
        elif kind == "value":
            ours = RECORD_TYPES[record_type].valid_versions
            assert ours.lo <= theirs.lo and theirs.hi <= ours.hi, where
