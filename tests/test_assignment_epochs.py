"""KIP-1251 effective assignment epochs (null ⇒ member epoch clamped at 0)."""

from __future__ import annotations

import pytest

from decoders import decode_record, effective_assignment_epochs


@pytest.mark.parametrize("partitions,epochs,member_epoch,expected", [
    ([0, 1, 2], [3, 5, 5], 5, ([3, 5, 5], "explicit", False)),
    ([0, 1], None, 7, ([7, 7], "legacy_null", False)),
    ([0, 1], None, -2, ([0, 0], "legacy_null", False)),
    ([0, 1], [4], 6, ([6, 6], "length_mismatch", True)),
    ([0], [1, 2], -2, ([0], "length_mismatch", True)),
    ([], None, 3, ([], "legacy_null", False)),
    ([], [], 3, ([], "explicit", False)),
])
def test_effective_assignment_epochs(partitions, epochs, member_epoch, expected):
    assert effective_assignment_epochs(partitions, epochs, member_epoch) == expected


def test_stored_list_is_exposed_exactly():
    # appendix vector: AssignmentEpochs [3, 5] on the first assigned topic
    rec = decode_record(bytes.fromhex("000800016700016d"), bytes.fromhex(
        "000000000005000000040002000000000000000000000000000000010300000000000000010100090300000003000000050100"))
    tp = rec.value["assignedPartitions"][0]
    assert tp["assignmentEpochs"] == [3, 5]
    assert effective_assignment_epochs(tp["partitions"], tp["assignmentEpochs"],
                                       rec.value["memberEpoch"]) == ([3, 5], "explicit", False)
    # same record without the tag: null stays null
    legacy = decode_record(bytes.fromhex("000800016700016d"), bytes.fromhex(
        "0000" "00000005" "00000004" "00" "02" "00000000000000000000000000000001" "03" "00000000" "00000001"
        "00" "01" "00"))
    assert legacy.value["assignedPartitions"][0]["assignmentEpochs"] is None
