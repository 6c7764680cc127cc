"""The release profiles (jobs.audits.java_releases) against the structural facts shipped with the
project and against the replay's own notion of what the current loader skips."""

from __future__ import annotations

import pytest

from decoders.records_catalog import RECORD_TYPES
from jobs.audits.downgrade_targets import parse_target
from jobs.audits.java_releases import RELEASES, java_release
from jobs.replay.modern import SKIPPED_BY_LOADER


def test_the_replay_skips_exactly_what_the_newest_loader_does_not_know():
    newest = max(RELEASES.values(), key=lambda r: r.release)
    assert set(RECORD_TYPES) - newest.serde_types == set(SKIPPED_BY_LOADER)


@pytest.mark.parametrize("version", sorted(RELEASES))
def test_each_profile_is_consistent(version):
    r = RELEASES[version]
    assert r.replay_types - r.serde_types <= {10, 11}   # 3.9's shard has cases its serde lacks
    assert set(r.max_versions) == set(r.serde_types)
    for record_type, layout in r.layouts.items():
        assert layout in [lay.name for lay in RECORD_TYPES[record_type].layouts()]


def test_targets_map_to_profiles():
    assert java_release(parse_target("3.9+new").release).version == "3.9.2"
    assert java_release((4, 3, 0)).version == "4.3.1"
    assert parse_target("4.0").known_types == RELEASES["4.0.2"].serde_types
    with pytest.raises(ValueError):
        java_release((3, 5, 0))
