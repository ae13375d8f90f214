"""The Jepsen checker (``tests/support/jepsen_history.py``) on hand-made histories: a clean history
passes every check, and each check fails on a history with its anomaly and only that one."""

from __future__ import annotations

import pytest
from jepsen_history import (
    FINAL_READER,
    Ack,
    AckMismatch,
    ClientError,
    Duplicate,
    Failure,
    History,
    InconsistentOffset,
    LostWrite,
    NemesisEvent,
    NonMonotonicRead,
    PartitionObservation,
    PollSkip,
    Read,
    Seek,
    StoredRecord,
    check,
    epoch_bump_resends,
    format_table,
    format_timeline,
    history_from_json,
    history_to_json,
    longest_unavailability,
)


def clean_history() -> History:
    """Two partitions, three acked writes, one failed write that made it anyway, a consumer that
    reads everything once and a final read of both partitions."""
    h = History(produce_start_s=0.0, produce_end_s=10.0)
    h.acks = [Ack(1.0, 0, "0-0", 0, 0), Ack(2.0, 0, "0-1", 1, 0), Ack(3.0, 1, "1-0", 0, 1)]
    h.failures = [Failure(4.0, 1, "1-1", 1, "REQUEST_TIMED_OUT")]
    h.reads = [
        Seek(0.0, "c0", 0, 0),
        Seek(0.0, "c0", 1, 0),
        Read(1.5, "c0", 0, 0, "0-0"),
        Read(2.5, "c0", 1, 0, "0-1"),
        Read(3.5, "c0", 0, 1, "1-0"),
        Read(5.0, "c0", 1, 1, "1-1"),
    ]
    h.reads += final_read({(0, 0): "0-0", (0, 1): "1-0", (1, 0): "0-1", (1, 1): "1-1"})
    h.final_ends = {0: 2, 1: 2}
    return h


def final_read(positions: dict[tuple[int, int], str]) -> list[Read | Seek]:
    out: list[Read | Seek] = [Seek(20.0, FINAL_READER, p, 0) for p in sorted({p for p, _ in positions})]
    out += [Read(21.0, FINAL_READER, p, o, v) for (p, o), v in sorted(positions.items())]
    return out


def without_final(h: History) -> list[Read | Seek]:
    return [r for r in h.reads if r.reader != FINAL_READER]


GATED = ("lost_writes", "duplicates", "inconsistent_offsets", "nonmonotonic_reads", "ack_offset_mismatches")


def only(result_counts: dict[str, int], name: str) -> None:
    """``name`` is the one gated check that fired."""
    assert result_counts[name] > 0, result_counts
    assert {k for k, v in result_counts.items() if v} == {name}, result_counts


def test_a_clean_history_passes_every_check() -> None:
    result = check(clean_history())
    assert result.ok
    assert result.gated_counts() == dict.fromkeys(GATED, 0)
    assert result.poll_skips == ()
    assert (result.acked, result.failed, result.failed_but_read, result.records_read) == (3, 1, 1, 8)
    assert result.unseen_by_consumers == 0
    assert result.final_read_incomplete == ()


def test_an_acked_write_missing_from_the_final_read_is_lost() -> None:
    h = clean_history()
    # The final read of partition 0 ends at offset 0: "1-0" (acked at 0:1) is gone.
    h.reads = without_final(h) + final_read({(0, 0): "0-0", (1, 0): "0-1", (1, 1): "1-1"})
    h.final_ends = {0: 1, 1: 2}
    result = check(h)
    only(result.gated_counts(), "lost_writes")
    # Acked at 0:1, the final read's end for partition 0 was 1: above it (the high watermark).
    assert result.lost_writes == (LostWrite("1-0", 0, 1, 3.0, above_final_end=True),)
    assert not result.ok
    assert "of which at/above the final high watermark" in format_table(result)


def test_a_write_read_by_a_consumer_but_not_by_the_final_read_is_still_lost() -> None:
    h = clean_history()
    h.reads = without_final(h) + final_read({(0, 0): "0-0", (1, 0): "0-1", (1, 1): "1-1"})
    result = check(h)
    assert result.lost_writes == (LostWrite("1-0", 0, 1, 3.0, above_final_end=False),)
    # The final read stopped short of the end it was given: reported with the loss.
    assert result.final_read_incomplete == (0,)


def test_an_acked_write_no_consumer_read_is_unseen_but_not_gated() -> None:
    h = clean_history()
    h.reads = [r for r in h.reads if not (isinstance(r, Read) and r.reader == "c0" and r.value == "1-0")]
    result = check(h)
    assert result.unseen_by_consumers == 1
    assert result.ok


def test_a_value_at_two_offsets_is_a_duplicate() -> None:
    h = clean_history()
    h.reads.append(Read(6.0, "c0", 0, 2, "0-0"))  # "0-0" again, at 0:2
    result = check(h)
    only(result.gated_counts(), "duplicates")
    assert result.duplicates == (Duplicate("0-0", ((0, 0), (0, 2)), acked_at=(0, 0)),)
    # Acked at the first copy: a resend does not explain the second one.
    assert not result.duplicates[0].retry_shaped
    assert result.unexplained_duplicates == result.duplicates
    assert "of which not shaped like a producer resend" in format_table(result)


def test_a_copy_before_the_acked_one_is_a_duplicate_shaped_like_a_resend() -> None:
    h = clean_history()
    # "1-0" was appended at 0:1 but answered NOT_LEADER_OR_FOLLOWER; the resend landed at 0:2 and
    # was acked there. Still a duplicate (gated), but one a producer resend explains.
    h.acks[2] = Ack(3.0, 1, "1-0", 0, 2)
    h.reads += [Read(6.0, "c0", 0, 2, "1-0")]
    h.reads = without_final(h) + final_read(
        {(0, 0): "0-0", (0, 1): "1-0", (0, 2): "1-0", (1, 0): "0-1", (1, 1): "1-1"}
    )
    h.final_ends = {0: 3, 1: 2}
    result = check(h)
    only(result.gated_counts(), "duplicates")
    assert result.duplicates == (Duplicate("1-0", ((0, 1), (0, 2)), acked_at=(0, 2)),)
    assert result.duplicates[0].retry_shaped
    assert result.unexplained_duplicates == ()
    assert not result.ok


def test_a_value_in_two_partitions_is_a_duplicate() -> None:
    h = clean_history()
    h.reads.append(Read(6.0, "c0", 1, 2, "0-0"))
    (dup,) = check(h).duplicates
    assert dup == Duplicate("0-0", ((0, 0), (1, 2)), acked_at=(0, 0))
    assert not dup.retry_shaped  # a producer resends to the same partition


def test_the_same_position_read_twice_is_not_a_duplicate() -> None:
    h = clean_history()
    h.reads += [Seek(7.0, "c0", 0, 0), Read(7.5, "c0", 0, 0, "0-0")]
    result = check(h)
    assert result.ok
    assert result.duplicates == ()


def test_one_offset_with_two_values_across_readers_is_inconsistent() -> None:
    h = clean_history()
    # Consumer c1 read "x" at 1:1 where c0 and the final read saw "1-1".
    h.reads[2:2] = [Seek(0.0, "c1", 1, 1), Read(5.5, "c1", 1, 1, "x")]
    result = check(h)
    only(result.gated_counts(), "inconsistent_offsets")
    assert result.inconsistent_offsets == (
        InconsistentOffset(1, 1, ("1-1", "x"), ("c0", "c1", FINAL_READER)),
    )


@pytest.mark.parametrize("offset", [0, 1], ids=["backward", "same-offset-again"])
def test_a_consumer_going_back_without_a_seek_is_non_monotonic(offset: int) -> None:
    h = clean_history()
    h.reads.insert(6, Read(3.6, "c0", 0, offset, "0-0" if offset == 0 else "1-0"))
    result = check(h)
    only(result.gated_counts(), "nonmonotonic_reads")
    assert result.nonmonotonic_reads == (NonMonotonicRead("c0", 0, 1, offset, 3.6),)


def test_going_back_after_a_seek_is_fine() -> None:
    h = clean_history()
    h.reads[6:6] = [Seek(3.55, "c0", 0, 0), Read(3.6, "c0", 0, 0, "0-0"), Read(3.7, "c0", 0, 1, "1-0")]
    assert check(h).ok


def test_monotonicity_is_per_partition_and_per_reader() -> None:
    h = clean_history()
    # c1 reads partition 0 from 0 after c0 read it up to 1; c0 reads partition 1 after partition 0.
    h.reads += [Seek(8.0, "c1", 0, 0), Read(8.1, "c1", 0, 0, "0-0"), Read(8.2, "c1", 0, 1, "1-0")]
    assert check(h).nonmonotonic_reads == ()


def test_a_different_value_at_an_acked_offset_is_a_mismatch() -> None:
    h = clean_history()
    # "1-0" was acked at 0:1; the final read finds "1-1" (a failed write) there and "1-0" at 0:2.
    h.reads = final_read({(0, 0): "0-0", (0, 1): "1-1", (0, 2): "1-0", (1, 0): "0-1"})
    h.final_ends = {0: 3, 1: 1}
    result = check(h)
    only(result.gated_counts(), "ack_offset_mismatches")
    assert result.ack_offset_mismatches == (AckMismatch(0, 1, "1-0", "1-1"),)
    assert result.lost_writes == ()  # "1-0" is there, at another offset


def test_a_skipped_offset_is_reported_but_not_gated() -> None:
    h = clean_history()
    h.reads.insert(6, Read(3.6, "c0", 0, 5, "x-5"))
    h.reads.append(Seek(6.0, "c0", 0, 6))
    result = check(h)
    assert result.poll_skips == (PollSkip("c0", 0, 2, 5, 3.6),)
    assert result.ok


def test_longest_unavailability_is_the_longest_gap_between_acks_including_the_ends() -> None:
    assert longest_unavailability([1.0, 2.0, 7.5, 8.0], 0.0, 10.0) == (5.5, (2.0, 7.5))
    assert longest_unavailability([1.0, 2.0], 0.0, 10.0) == (8.0, (2.0, 10.0))
    assert longest_unavailability([], 3.0, 10.0) == (7.0, (3.0, 10.0))
    # Acks outside the window (the final flush) do not count.
    assert longest_unavailability([20.0], 0.0, 10.0) == (10.0, (0.0, 10.0))


def test_unavailability_is_reported_from_the_acks_of_the_history() -> None:
    h = clean_history()
    result = check(h)
    assert result.longest_unavailability_s == pytest.approx(7.0)
    assert result.unavailability_window_s == (3.0, 10.0)
    # Partition 1 saw one ack (at 2.0) and one failure: unavailable from 2.0 to the end.
    assert result.partition_unavailability_s == {0: (7.0, (3.0, 10.0)), 1: (8.0, (2.0, 10.0))}


def test_the_json_report_has_every_count_and_examples() -> None:
    h = clean_history()
    h.reads.append(Read(6.0, "c0", 0, 2, "0-0"))
    data = check(h).to_json()
    assert data["ok"] is False
    assert data["counts"] == {**dict.fromkeys(GATED, 0), "duplicates": 1}
    assert data["examples"]["duplicates"] == [
        {"value": "0-0", "positions": ((0, 0), (0, 2)), "acked_at": (0, 0), "retry_shaped": False}
    ]
    assert data["unexplained_duplicates"] == 1


def test_a_history_survives_json_and_checks_the_same() -> None:
    import json

    h = clean_history()
    h.reads.append(Read(6.0, "c0", 0, 2, "0-0"))
    h.nemesis.append(NemesisEvent(2.0, "kill -9", 4, "broker"))
    h.client_errors.append(ClientError(2.1, "c0", "_TRANSPORT: down"))
    h.partition_states.append(PartitionObservation(2.2, 0, 5, (5, 6)))
    again = history_from_json(json.loads(json.dumps(history_to_json(h))))
    assert again == h
    assert check(again) == check(h)


def test_the_timeline_merges_faults_and_partition_changes_in_time_order() -> None:
    h = clean_history()
    h.nemesis += [NemesisEvent(1.0, "kill -9", 4, "broker"), NemesisEvent(3.0, "restart", 4)]
    h.partition_states.append(PartitionObservation(2.0, 0, 5, (5, 6)))
    lines = format_timeline(h).splitlines()
    assert [line.split()[2] for line in lines] == ["kill", "partition", "restart"]
    assert "leader 5, ISR [5, 6]" in lines[1]


def test_the_table_marks_each_gated_check() -> None:
    h = clean_history()
    h.reads.append(Read(6.0, "c0", 0, 2, "0-0"))
    table = format_table(check(h))
    assert "duplicates (one value at two offsets)" in table
    row = next(line for line in table.splitlines() if line.startswith("duplicates"))
    assert row.split()[-2:] == ["1", "FAIL"]
    assert next(line for line in table.splitlines() if line.startswith("lost writes")).endswith("ok")


# -- duplicates the idempotent producer makes itself ------------------------------------------------

RESENT = Duplicate("0-7", ((0, 3), (0, 9)), acked_at=(0, 9))


def stored(first: StoredRecord, second: StoredRecord) -> dict[tuple[int, int], StoredRecord]:
    return {(0, 3): first, (0, 9): second}


def test_a_copy_re_sent_under_a_higher_producer_epoch_is_the_clients() -> None:
    # librdkafka bumped its epoch (0 -> 6) and sent the record again, sequence restarted at 0.
    copies = stored(StoredRecord(1000, 0, 1886, 555), StoredRecord(1000, 6, 0, 555))
    assert epoch_bump_resends([RESENT], copies) == (RESENT,)


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        (
            StoredRecord(1000, 6, 5, 555),
            StoredRecord(1000, 6, 9, 555),
            "one epoch: the broker let it in twice",
        ),
        (
            StoredRecord(1000, 6, 0, 555),
            StoredRecord(1000, 0, 1886, 555),
            "the later copy has the lower epoch",
        ),
        (StoredRecord(1000, 0, 1886, 555), StoredRecord(1000, 6, 0, 556), "two timestamps: two records"),
        (StoredRecord(1000, 0, 1886, 555), StoredRecord(1001, 6, 0, 555), "two producers"),
        (StoredRecord(-1, 0, -1, 555), StoredRecord(-1, 6, -1, 555), "no producer id: not idempotent"),
    ],
)
def test_any_other_duplicate_stays_a_failure(first: StoredRecord, second: StoredRecord, why: str) -> None:
    assert epoch_bump_resends([RESENT], stored(first, second)) == (), why


def test_a_duplicate_with_a_copy_in_no_segment_file_or_in_two_partitions_stays_a_failure() -> None:
    copies = stored(StoredRecord(1000, 0, 1886, 555), StoredRecord(1000, 6, 0, 555))
    assert epoch_bump_resends([RESENT], {(0, 3): copies[(0, 3)]}) == ()
    across = Duplicate("0-7", ((0, 3), (1, 9)), acked_at=(1, 9))
    assert epoch_bump_resends([across], {(0, 3): copies[(0, 3)], (1, 9): copies[(0, 9)]}) == ()


def test_the_table_counts_the_clients_resends_apart_and_does_not_fail_on_them() -> None:
    h = clean_history()
    h.reads.append(Read(6.0, "c0", 0, 2, "0-0"))
    result = check(h)
    row = next(line for line in format_table(result, client_resends=1).splitlines() if line.startswith("dup"))
    assert row.split()[-2:] == ["1", "ok"]
    assert "of which re-sent by the client, new epoch" in format_table(result, client_resends=1)
    assert "re-sent by the client" not in format_table(result)
