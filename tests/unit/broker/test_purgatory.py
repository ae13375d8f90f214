"""The purgatory of waiting requests: every operation leaves exactly once (taken, removed or
expired), at its deadline's place, whatever key it moved to meanwhile."""

from __future__ import annotations

import random

import pytest

from kraft.broker.purgatory import Purgatory


class Op:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def test_take_gives_what_waits_on_a_key_oldest_first_and_expire_skips_it() -> None:
    p: Purgatory[str, Op] = Purgatory()
    a, b, c = Op("a"), Op("b"), Op("c")
    p.watch("x", a, 100)
    p.watch("y", b, 50)
    p.watch("x", c, 200)
    assert p.next_deadline_ms() == 50
    assert p.take("x") == [a, c]
    assert a not in p and len(p) == 1
    assert p.expire(1000) == [b]
    assert p.next_deadline_ms() is None and len(p) == 0


def test_an_operation_cannot_wait_twice() -> None:
    p: Purgatory[str, Op] = Purgatory()
    a = Op("a")
    p.watch("x", a, 100)
    with pytest.raises(ValueError):
        p.watch("y", a, 100)


def test_waiting_looks_without_taking_and_remove_takes_one() -> None:
    p: Purgatory[str, Op] = Purgatory()
    a, b = Op("a"), Op("b")
    p.watch("x", a, 100)
    p.watch("x", b, 300)
    assert p.waiting("x") == [a, b] and p.waiting("nothing") == []
    assert len(p) == 2
    assert p.remove(a) and not p.remove(a)
    assert p.next_deadline_ms() == 300  # a's deadline went with it
    assert p.expire(299) == [] and p.expire(300) == [b]


def test_a_moved_operation_keeps_its_deadline_and_expires_once() -> None:
    p: Purgatory[str, Op] = Purgatory()
    a, b = Op("a"), Op("b")
    p.watch("x", a, 100)
    p.watch("y", b, 150)
    p.move(a, "y")
    p.move(a, "y")  # already there: nothing changes
    assert p.waiting("x") == [] and p.keys() == ["y"]
    assert p.waiting("y") == [b, a]  # in the order they came to the key
    assert p.next_deadline_ms() == 100
    assert p.expire(100) == [a]
    assert p.expire(10_000) == [b]
    with pytest.raises(KeyError):
        p.move(a, "x")


def test_a_rewatched_operation_is_due_at_its_new_deadline_only() -> None:
    p: Purgatory[str, Op] = Purgatory()
    a = Op("a")
    p.watch("x", a, 100)
    assert p.take("x") == [a]
    p.watch("x", a, 500)
    assert p.next_deadline_ms() == 500
    assert p.expire(400) == []
    assert p.expire(500) == [a]


def test_random_operations_agree_with_a_plain_model() -> None:
    rng = random.Random(7)
    p: Purgatory[int, Op] = Purgatory()
    model: dict[Op, tuple[int, int]] = {}  # op -> (key, deadline)
    ops = [Op(f"op{i}") for i in range(40)]
    now = 0
    for _ in range(3000):
        op = rng.choice(ops)
        action = rng.random()
        if op not in model and action < 0.4:
            key, deadline = rng.randrange(4), now + rng.randrange(1, 200)
            p.watch(key, op, deadline)
            model[op] = (key, deadline)
        elif op in model and action < 0.55:
            key = rng.randrange(4)
            p.move(op, key)
            model[op] = (key, model[op][1])
        elif op in model and action < 0.65:
            assert p.remove(op)
            del model[op]
        elif action < 0.7:
            key = rng.randrange(4)
            taken = p.take(key)
            assert set(taken) == {o for o, (k, _) in model.items() if k == key}
            for o in taken:
                del model[o]
        elif action < 0.8:
            now += rng.randrange(0, 60)
            expired = p.expire(now)
            due = {o for o, (_, d) in model.items() if d <= now}
            assert set(expired) == due and len(expired) == len(due)
            assert [model[o][1] for o in expired] == sorted(model[o][1] for o in expired)
            for o in expired:
                del model[o]
        assert len(p) == len(model)
        assert p.next_deadline_ms() == (min(d for _, d in model.values()) if model else None)
        for key in range(4):
            assert set(p.waiting(key)) == {o for o, (k, _) in model.items() if k == key}
