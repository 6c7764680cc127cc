"""KIP-1251 effective assignment epochs (absent, null or empty ⇒ member epoch clamped at 0)."""

from __future__ import annotations

import pytest

from decoders import decode_record, effective_assignment_epochs


@pytest.mark.parametrize("partitions,epochs,member_epoch,expected", [
    ([0, 1, 2], [3, 5, 5], 5, ([3, 5, 5], "explicit", False)),
    ([0, 1], None, 7, ([7, 7], "legacy_null", False)),
    ([0, 1], None, -2, ([0, 0], "legacy_null", False)),
    ([0, 1], [4], 6, ([6, 6], "length_mismatch", True)),
    ([0], [1, 2], -2, ([0], "length_mismatch", True)),
    ([0, 1], [], 7, ([7, 7], "legacy_null", False)),
    ([0, 1], [], -2, ([0, 0], "legacy_null", False)),
    ([], None, 3, ([], "legacy_null", False)),
    # Kafka's test is ``epochs != null && !epochs.isEmpty()``: an empty list is the legacy path
    ([], [], 3, ([], "legacy_null", False)),
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
    # same record without the tag (pre-4.3 writer): the schema default, an empty list
    legacy = decode_record(bytes.fromhex("000800016700016d"), bytes.fromhex(
        "0000" "00000005" "00000004" "00" "02" "00000000000000000000000000000001" "03" "00000000" "00000001"
        "00" "01" "00"))
    legacy_tp = legacy.value["assignedPartitions"][0]
    assert legacy_tp["assignmentEpochs"] == []
    assert effective_assignment_epochs(legacy_tp["partitions"], legacy_tp["assignmentEpochs"],
                                       legacy.value["memberEpoch"]) == ([5, 5], "legacy_null", False)
