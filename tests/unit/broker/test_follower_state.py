"""kraft.broker.partition.FollowerState: a follower's fetch times, recorded one by one or held by a
fetch session's clock while the partition is quiet."""

from __future__ import annotations

from kraft.broker.partition import FollowerState, QuietClock


class _Hold:
    """A session's hold (the replica manager's ``_Quiet``): its clock, and whether it was released."""

    def __init__(self) -> None:
        self.clock = QuietClock()
        self.released = 0

    def release(self) -> None:
        self.released += 1


def _caught_up_at(ms: int) -> FollowerState:
    s = FollowerState()
    s.on_fetch(10, 10, ms, 7)
    return s


def test_a_held_state_counts_the_sessions_reads_as_fetches_at_the_log_end() -> None:
    s = _caught_up_at(100)
    a = _Hold()
    a.clock.ms, a.clock.epoch = 100, 7
    s.hold(a)
    for ms in (600, 1100, 1600):
        a.clock.ms = ms  # the session is read: the follower fetched the log end again
        assert s.last_caught_up_ms == s.last_fetch_ms == ms
    s.let_go(a)
    assert s.quiet is None and a.released == 0
    a.clock.ms = 9_999  # the session's later reads no longer count
    assert (s.last_caught_up_ms, s.last_fetch_ms, s.log_end_offset) == (1600, 1600, 10)
    # What on_fetch makes of the next fetch is what it would have made after each read recorded:
    # behind the log end now, but it had reached the leader's end at its last fetch (1600).
    s.on_fetch(10, 15, 2_000, 7)
    assert (s.last_caught_up_ms, s.last_fetch_ms) == (1600, 2_000)


def test_a_second_session_takes_the_hold_and_the_first_is_told() -> None:
    # Two sessions of one follower (it lost its session id and opened another while the old one
    # still had a fetch waiting): only the one holding the state moves its times, and the other
    # reads the partition again rather than believe its reads still count.
    s = _caught_up_at(100)
    a, b = _Hold(), _Hold()
    a.clock.ms = 200
    s.hold(a)
    b.clock.ms = 300
    s.hold(b)
    assert a.released == 1 and s.quiet is b
    a.clock.ms = 5_000
    assert s.last_caught_up_ms == 300
    s.let_go(a)  # not its hold any more: nothing changes
    assert s.quiet is b
    b.clock.ms = 800
    assert s.last_caught_up_ms == 800


def test_another_fetch_of_a_held_partition_ends_the_hold_and_tells_the_session() -> None:
    s = _caught_up_at(100)
    a = _Hold()
    a.clock.ms = 700
    s.hold(a)
    s.on_fetch(10, 12, 900, 8)  # a fetch by another path (a full fetch of a new session)
    assert s.quiet is None and a.released == 1
    assert (s.last_caught_up_ms, s.last_fetch_ms, s.broker_epoch) == (700, 900, 8)
