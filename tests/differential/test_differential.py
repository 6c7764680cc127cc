"""The differential suite: every release's real group coordinator is the oracle for the audit.

Generated logs (``support.loggen``: every record type and writer era, compaction at random
cleaning points) are written once; each release's coordinator (``oracle.runner``, one JVM per
release) and the audit (``offsetlake audit --target-version``'s pure code) judge every partition,
and the verdicts must be equal: loads or stops (where, and at which step), records skipped per
type, the groups that survive with their type, the committed offsets.

``OFFSETLAKE_DIFFERENTIAL_LOGS`` sets how many logs (default 2000); the soak runs
``tests/differential/run.py --logs 100000``. A disagreement is shrunk and saved with
``tests/differential/cases.py``; saved cases replay below without a JVM.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from differential.cases import comparable, load_saved, saved_cases
from differential.harness import audit_verdict, differences, model_verdict, oracle_verdict, partition_dirs
from differential.run import compare, write_logs
from oracle.runner import RELEASES as ORACLE_RELEASES
from oracle.runner import Oracle

from jobs.audits.java_releases import RELEASES

pytestmark = pytest.mark.oracle

LOGS = int(os.environ.get("OFFSETLAKE_DIFFERENTIAL_LOGS", "2000"))


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[int, Path]:
    return write_logs(range(LOGS), tmp_path_factory.mktemp("differential"))


@pytest.fixture(scope="module")
def facts() -> dict:
    """Each partition directory's decoded facts, decoded for the first release and kept for the
    others (``compare``'s cache): the audit of them is each release's own."""
    return {}


def test_every_supported_release_has_a_profile_and_an_oracle():
    assert sorted(RELEASES) == sorted(ORACLE_RELEASES)


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_the_audit_agrees_with_the_release_on_every_generated_log(release, logs, facts):
    found = []
    with Oracle(release) as oracle:
        for seed, directory in logs.items():
            found += compare(oracle, release, seed, directory, facts=facts)
    shown = "\n".join(f"seed {d.seed} partition {d.partition}: " + "; ".join(d.differences)
                      for d in found[:10])
    assert not found, (f"{len(found)} disagreement(s) with {release} over {len(logs)} logs "
                       f"(shrink one with tests/differential/cases.py):\n{shown}")


def test_the_suite_sees_a_wrong_profile(logs):
    """A test that cannot fail is worth nothing: the audit as it stood before the 3.8 marker fix
    (commits overwrite, as in 3.7) must disagree with 3.8.1 on some of the same logs."""
    wrong = replace(RELEASES["3.8.1"], release=(3, 7, 9))
    disagreements = 0
    with Oracle("3.8.1") as oracle:
        for directory in list(logs.values())[:400]:
            dirs = partition_dirs(directory)
            for part in oracle.load(directory)["partitions"]:
                disagreements += bool(differences(model_verdict(dirs[part["partition"]], wrong),
                                                  oracle_verdict(part)))
    assert disagreements > 0


@pytest.mark.parametrize("path", saved_cases(), ids=lambda p: p.stem)
def test_saved_regression_cases_keep_the_release_behaviour(path, tmp_path):
    log, expectation = load_saved(path)
    log.write(tmp_path)
    directory = partition_dirs(tmp_path)[expectation["partition"]]
    assert comparable(audit_verdict(directory, RELEASES[expectation["release"]])) == \
        expectation["verdict"], expectation["why"]


def test_the_matrix_in_the_docs_is_the_releases_and_the_audits(tmp_path):
    """docs/downgrade.md's matrix came from the oracle; the audit must render the same one."""
    from differential.matrix import model_matrix, oracle_matrix, render, table_in

    doc = (Path(__file__).resolve().parents[2] / "docs" / "downgrade.md").read_text()
    expected = render(oracle_matrix(tmp_path / "oracle"))
    assert table_in(doc) == expected, "regenerate: tests/differential/matrix.py --write docs/downgrade.md"
    assert render(model_matrix(tmp_path / "model")) == expected
