"""Requests that must wait, sans-IO (Kafka's ``DelayedOperationPurgatory``).

A waiting operation is *watched* under a key (what may complete it: an answer's correlation id, a
new metadata image, a partition's high watermark) with a deadline on the node's clock. The owner
asks for what waits on a key when that key's event happens: ``take`` (out of the purgatory, to be
re-watched if not done) or ``waiting`` (a look, then ``remove`` what is done and ``move`` what
now waits on another key, both keeping the deadline's place: re-watching every operation on
every event grew the deadline heap by one entry each time, and a produce under load re-checks
its partition's waiters on each append and high watermark move). It collects what expired on each
poll (``expire``); ``next_deadline_ms`` tells the node when to poll again. Nothing here reads a
clock or runs a timer: time comes in as ``now_ms``, so the simulator drives waiting exactly as the
server does.

Main invariant: an operation is in the purgatory at most once, and leaves it exactly once: taken,
expired or removed (an operation completed another way is ``remove``d by its owner).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Purgatory(Generic[K, T]):
    def __init__(self) -> None:
        self._by_key: dict[K, dict[int, T]] = {}
        self._where: dict[int, tuple[K, int]] = {}  # id(op) -> (key, seq)
        # (deadline, seq, id(op)): lazy; an entry stands while the op is waiting with that seq.
        self._deadlines: list[tuple[int, int, int]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, op: T) -> bool:
        return id(op) in self._where

    def __iter__(self) -> Iterator[T]:
        for waiting in self._by_key.values():
            yield from list(waiting.values())

    def watch(self, key: K, op: T, deadline_ms: int) -> None:
        """Wait for ``key``'s event until ``deadline_ms``.

        Raises:
            ValueError: ``op`` is already waiting.
        """
        ident = id(op)
        if ident in self._where:
            raise ValueError(f"{op!r} is already in the purgatory")
        seq = next(self._seq)
        self._by_key.setdefault(key, {})[seq] = op
        self._where[ident] = (key, seq)
        heapq.heappush(self._deadlines, (deadline_ms, seq, ident))

    def keys(self) -> list[K]:
        """The keys something waits on."""
        return list(self._by_key)

    def take(self, key: K) -> list[T]:
        """Everything waiting on ``key``, oldest first, out of the purgatory."""
        waiting = self._by_key.pop(key, None)
        if not waiting:
            return []
        ops = list(waiting.values())
        for op in ops:
            del self._where[id(op)]
        return ops

    def waiting(self, key: K) -> list[T]:
        """What waits on ``key``, oldest first, left in the purgatory."""
        waiting = self._by_key.get(key)
        return list(waiting.values()) if waiting else []

    def move(self, op: T, key: K) -> None:
        """Make ``op`` wait on ``key`` instead, with its deadline.

        Raises:
            KeyError: ``op`` is not waiting.
        """
        old, seq = self._where[id(op)]
        if old == key:
            return
        waiting = self._by_key[old]
        del waiting[seq]
        if not waiting:
            del self._by_key[old]
        self._by_key.setdefault(key, {})[seq] = op
        self._where[id(op)] = (key, seq)

    def remove(self, op: T) -> bool:
        """Take ``op`` out wherever it waits; returns whether it was waiting."""
        where = self._where.pop(id(op), None)
        if where is None:
            return False
        key, seq = where
        waiting = self._by_key[key]
        del waiting[seq]
        if not waiting:
            del self._by_key[key]
        return True

    def expire(self, now_ms: int) -> list[T]:
        """The operations whose deadline is at or before ``now_ms``, in deadline order, out of the
        purgatory."""
        out: list[T] = []
        heap = self._deadlines
        while heap and heap[0][0] <= now_ms:
            _, seq, ident = heapq.heappop(heap)
            where = self._where.get(ident)
            if where is None or where[1] != seq:
                continue  # taken or removed meanwhile (or re-watched: then a newer entry stands)
            key = where[0]
            waiting = self._by_key[key]
            op = waiting.pop(seq)
            if not waiting:
                del self._by_key[key]
            del self._where[ident]
            out.append(op)
        return out

    def next_deadline_ms(self) -> int | None:
        """The earliest deadline of a waiting operation, or None."""
        heap = self._deadlines
        where = self._where
        while heap:
            _, seq, ident = heap[0]
            w = where.get(ident)
            if w is not None and w[1] == seq:
                return heap[0][0]
            heapq.heappop(heap)  # drop entries of operations no longer waiting with that seq
        return None
