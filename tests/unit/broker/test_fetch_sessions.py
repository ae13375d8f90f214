"""The fetch session cache (KIP-227) on its own: contexts, the answer rule and eviction, as tables."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import replace

import pytest

from kraft.broker.fetch_sessions import (
    ContextKind,
    FetchContext,
    FetchSessionCache,
    PartitionAnswer,
    PartitionFetch,
    PartitionKey,
    next_epoch,
)
from kraft.protocol.error_codes import ErrorCode as E

A: PartitionKey = ("a", 0)
B: PartitionKey = ("a", 1)
C: PartitionKey = ("c", 0)
EVICT = 120_000


def cache(slots: int = 10, ids: list[int] | None = None) -> FetchSessionCache:
    source = iter(ids) if ids is not None else itertools.count(100)
    return FetchSessionCache(new_session_id=source.__next__, max_slots=slots, eviction_ms=EVICT)


def req(offset: int = 0) -> PartitionFetch:
    return PartitionFetch(fetch_offset=offset, max_bytes=1024)


def ans(
    hw: int = 10, *, lso: int | None = None, start: int = 0, size: int = 0, error: int = 0
) -> PartitionAnswer:
    return PartitionAnswer(
        error_code=error,
        high_watermark=hw,
        last_stable_offset=hw if lso is None else lso,
        log_start_offset=start,
        records_size=size,
    )


def open_session(
    c: FetchSessionCache,
    now: int = 0,
    keys: tuple[PartitionKey, ...] = (A, B),
    *,
    privileged: bool = False,
    ids: bool = False,
) -> int:
    ctx = c.new_context(
        now,
        session_id=0,
        epoch=0,
        uses_topic_ids=ids,
        privileged=privileged,
        fetch_data=[(k, req()) for k in keys],
    )
    assert ctx.kind is ContextKind.FULL
    return c.answer(ctx, now, {k: ans() for k in keys}).session_id


def incremental(
    c: FetchSessionCache,
    sid: int,
    epoch: int,
    data: list[tuple[PartitionKey, PartitionFetch]] | None = None,
    forgotten: tuple[PartitionKey, ...] = (),
    *,
    now: int = 1,
    ids: bool = False,
) -> FetchContext:
    return c.new_context(
        now,
        session_id=sid,
        epoch=epoch,
        uses_topic_ids=ids,
        privileged=False,
        fetch_data=data or [],
        forgotten=forgotten,
    )


def test_full_fetch_creates_a_session_and_sessionless_keeps_nothing() -> None:
    c = cache(ids=[0, -5, 7])  # 0 and negatives are never handed out: the cache draws again
    sid = open_session(c)
    assert sid == 7 and len(c) == 1 and c.num_partitions == 2
    assert c.sessions[7].epoch == 1  # the next incremental fetch carries epoch 1
    ctx = c.new_context(
        0, session_id=0, epoch=-1, uses_topic_ids=False, privileged=False, fetch_data=[(A, req())]
    )
    assert ctx.kind is ContextKind.SESSIONLESS
    out = c.answer(ctx, 0, {A: ans()})
    assert (out.session_id, out.include, len(c)) == (0, None, 1)


def test_session_ids_are_unique_in_the_cache() -> None:
    c = cache(ids=[5, 5, 5, 6])
    assert (open_session(c), open_session(c)) == (5, 6)


@pytest.mark.parametrize(
    ("session_id", "epoch", "ids", "error"),
    [
        (999, 1, False, E.FETCH_SESSION_ID_NOT_FOUND),  # unknown id
        (100, 2, False, E.INVALID_FETCH_SESSION_EPOCH),  # ahead of the expected epoch
        (100, 5, False, E.INVALID_FETCH_SESSION_EPOCH),
        (100, 1, True, E.FETCH_SESSION_TOPIC_ID_ERROR),  # the session names topics, the fetch ids
    ],
)
def test_session_errors(session_id: int, epoch: int, ids: bool, error: E) -> None:
    c = cache()
    assert open_session(c) == 100
    ctx = incremental(c, session_id, epoch, [(C, req())], ids=ids)
    assert (ctx.kind, ctx.error) == (ContextKind.SESSION_ERROR, error)
    out = c.answer(ctx, 1, {})
    assert (out.error, out.session_id, out.include) == (error, 0, frozenset())
    assert list(c.sessions[100].partitions) == [A, B] and c.sessions[100].epoch == 1  # untouched


@pytest.mark.parametrize(
    ("case", "a", "b", "included"),
    [
        ("nothing changed", ans(), ans(), set()),
        ("new records", ans(size=100), ans(), {A}),
        ("high watermark moved", ans(hw=11), ans(), {A}),
        ("last stable offset moved", ans(lso=9), ans(), {A}),
        ("log start moved", ans(start=3), ans(), {A}),
        ("error", ans(error=E.NOT_LEADER_OR_FOLLOWER), ans(), {A}),
        ("preferred replica", replace(ans(), preferred_read_replica=2), ans(), {A}),
        ("diverging epoch", replace(ans(), diverging=True), ans(), {A}),
        ("both", ans(size=1), ans(hw=12), {A, B}),
    ],
)
def test_incremental_answer_carries_only_what_changed(
    case: str, a: PartitionAnswer, b: PartitionAnswer, included: set[PartitionKey]
) -> None:
    c = cache()
    sid = open_session(c)
    ctx = incremental(c, sid, 1)
    assert ctx.kind is ContextKind.INCREMENTAL
    assert ctx.session is not None and list(ctx.session.partitions) == [A, B]  # read: the whole session
    out = c.answer(ctx, 1, {A: a, B: b})
    assert (out.error, out.session_id, set(out.include or ())) == (E.NONE, sid, included), case


def test_the_cached_answer_moves_with_what_was_sent() -> None:
    c = cache()
    sid = open_session(c)
    assert c.answer(incremental(c, sid, 1), 1, {A: ans(hw=11), B: ans()}).include == {A}
    assert c.answer(incremental(c, sid, 2), 1, {A: ans(hw=11), B: ans()}).include == frozenset()
    # An error resets the cached high watermark: the partition comes back once the error is gone.
    assert c.answer(incremental(c, sid, 3), 1, {A: ans(error=6), B: ans()}).include == {A}
    assert c.answer(incremental(c, sid, 4), 1, {A: ans(hw=11), B: ans()}).include == {A}
    assert c.sessions[sid].epoch == 5


def test_incremental_adds_updates_and_forgets_partitions() -> None:
    c = cache()
    sid = open_session(c)
    ctx = incremental(c, sid, 1, [(B, req(42)), (C, req(7))], forgotten=(A,))
    assert ctx.session is not None
    assert [(k, cp.request.fetch_offset) for k, cp in ctx.session.partitions.items()] == [(B, 42), (C, 7)]
    # The added partition was never answered: it is carried even with nothing new.
    assert c.answer(ctx, 1, {B: ans(), C: ans()}).include == {C}
    assert c.num_partitions == 2
    # Records move a partition to the end of the session (fairness under the response's max_bytes).
    c.answer(incremental(c, sid, 2), 1, {B: ans(size=5), C: ans()})
    assert list(c.sessions[sid].partitions) == [C, B]
    # Each partition's ``pos`` keeps that order (the broker sorts what it reads by it).
    incremental(c, sid, 3, [(A, req(1))])
    positions = [cp.pos for cp in c.sessions[sid].partitions.values()]
    assert list(c.sessions[sid].partitions) == [C, B, A] and positions == sorted(set(positions))


def test_forgetting_every_partition_closes_the_session() -> None:
    c = cache()
    sid = open_session(c)
    ctx = incremental(c, sid, 1, forgotten=(A, B))
    assert ctx.kind is ContextKind.SESSIONLESS and len(c) == 0 and c.num_partitions == 0
    assert c.answer(ctx, 1, {}).session_id == 0


@pytest.mark.parametrize(
    ("epoch", "kind", "sessions_after"), [(-1, ContextKind.SESSIONLESS, 0), (0, ContextKind.FULL, 1)]
)
def test_a_full_fetch_naming_a_session_closes_it(epoch: int, kind: ContextKind, sessions_after: int) -> None:
    c = cache()
    sid = open_session(c)
    ctx = c.new_context(
        5, session_id=sid, epoch=epoch, uses_topic_ids=False, privileged=False, fetch_data=[(C, req())]
    )
    assert ctx.kind is kind and sid not in c.sessions
    out = c.answer(ctx, 5, {C: ans()})
    assert (
        len(c) == sessions_after and (out.session_id != 0) == (sessions_after == 1) and out.session_id != sid
    )
    assert incremental(c, sid, 1).error == E.FETCH_SESSION_ID_NOT_FOUND


def test_a_stale_context_answers_invalid_epoch() -> None:
    """A parked incremental fetch answered after another fetch of its session moved the epoch."""
    c = cache()
    sid = open_session(c)
    parked = incremental(c, sid, 1)
    assert c.answer(incremental(c, sid, 2), 2, {A: ans(), B: ans()}).error == E.NONE
    out = c.answer(parked, 3, {A: ans(size=1), B: ans()})
    assert (out.error, out.session_id) == (E.INVALID_FETCH_SESSION_EPOCH, 0)


def test_topic_ids_key_the_session_from_v13() -> None:
    c = cache()
    t = uuid.UUID(int=1)
    sid = open_session(c, keys=((t, 0),), ids=True)
    assert incremental(c, sid, 1, ids=False).error == E.FETCH_SESSION_TOPIC_ID_ERROR
    assert incremental(c, sid, 1, ids=True, forgotten=((t, 0),)).kind is ContextKind.SESSIONLESS


def test_epochs_wrap_to_one() -> None:
    assert [next_epoch(e) for e in (-1, 0, 1, 2147483647)] == [-1, 1, 2, 1]


# -- eviction -----------------------------------------------------------------------------------------


def test_a_full_cache_answers_session_id_zero() -> None:
    c = cache(slots=2)
    open_session(c, 0, (A, B))
    open_session(c, 0, (A, B))
    # Nothing stale (used within eviction_ms), nothing older than eviction_ms: no room for a consumer.
    assert open_session(c, 1_000, (A, B, C)) == 0
    assert len(c) == 2 and c.evictions == 0


def test_the_least_recently_used_session_goes_once_unused_for_eviction_ms() -> None:
    c = cache(slots=2)
    first = open_session(c, 0)
    second = open_session(c, 10)
    c.answer(incremental(c, first, 1, now=20), 20, {A: ans(), B: ans()})  # first used last
    assert open_session(c, 10 + EVICT, (A,)) == 0  # second unused exactly eviction_ms: not yet
    third = open_session(c, 11 + EVICT, (A,))
    assert third != 0 and set(c.sessions) == {first, third} and second not in c.sessions
    assert c.evictions == 1


@pytest.mark.parametrize(
    ("privileged", "size", "evicted"),
    [
        # A follower evicts a consumer session before anything else, whatever its size or age.
        (True, 1, "consumer"),
        # A consumer never evicts a follower, nor a consumer session younger than eviction_ms
        # (when touched) or with as many partitions.
        (False, 3, None),
    ],
)
def test_followers_are_privileged(privileged: bool, size: int, evicted: str | None) -> None:
    c = cache(slots=2)
    follower = open_session(c, 0, (A, B), privileged=True)
    consumer = open_session(c, 0, (A, B, C))
    keys = ((A,), (A, B), (A, B, C))[size - 1]
    sid = open_session(c, 1_000, keys, privileged=privileged)
    gone = {follower: "follower", consumer: "consumer"}
    assert (sid != 0) == (evicted is not None)
    assert {gone[s] for s in (follower, consumer) if s not in c.sessions} == ({evicted} if evicted else set())


def test_old_sessions_with_fewer_partitions_are_evicted_smallest_first() -> None:
    c = cache(slots=3)
    big = open_session(c, 0, (A, B, C))
    small = open_session(c, 0, (A,))
    follower = open_session(c, 0, (A,), privileged=True)
    later = EVICT + 1  # all older than eviction_ms once touched again (and none stale: all used now)
    for sid, keys in ((big, (A, B, C)), (small, (A,)), (follower, (A,))):
        c.answer(incremental(c, sid, 1, now=later), later, {k: ans() for k in keys})
    # A consumer with two partitions evicts the smallest consumer session (one partition).
    assert open_session(c, later + 1, (A, B)) != 0 and small not in c.sessions
    # A consumer with one partition finds nothing smaller: no session.
    assert open_session(c, later + 2, (A,)) == 0
    newer = next(s for s in c.sessions if s not in (big, follower))
    # A follower evicts a consumer session first, whatever its size: the one with fewest partitions.
    assert open_session(c, later + 3, (A,), privileged=True) != 0 and newer not in c.sessions
    assert {big, follower} <= set(c.sessions) and c.evictions == 2
