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


def test_the_earliest_lag_deadline_is_the_earliest_isr_followers_caught_up_time_plus_the_lag() -> None:
    # earliest_lag_deadline_ms skips what cannot lower its answer; on random partitions (ISR
    # members and not, held quiet by one of a few sessions or not) it answers what the plain
    # definition does: min over ISR followers of max(own caught-up time, hold clock) + lag + 1.
    import random
    import uuid

    from kraft.broker.partition import Partition, earliest_lag_deadline_ms
    from kraft.metadata.image import TopicIdPartition

    rng = random.Random(5)
    for _ in range(200):
        holds = [_Hold() for _ in range(3)]
        for h in holds:
            h.clock.ms = rng.randint(0, 2_000)
        partitions = []
        expected: list[int] = []
        for i in range(rng.randint(0, 12)):
            p = Partition(1, TopicIdPartition(uuid.UUID(int=1), i), "t", None)  # type: ignore[arg-type]
            p.isr = tuple(r for r in (1, 2, 3, 4) if r == 1 or rng.random() < 0.7)
            for r in (2, 3, 4):
                s = FollowerState(last_caught_up_ms=rng.randint(0, 2_000))
                if rng.random() < 0.6:
                    s.hold(rng.choice(holds))
                p.followers[r] = s
                if r in p.isr:
                    expected.append(s.last_caught_up_ms)
            partitions.append(p)
        want = None if not expected else min(expected) + 30_000 + 1
        assert earliest_lag_deadline_ms(partitions, 30_000) == want
