"""Requests that must wait, sans-IO (Kafka's ``DelayedOperationPurgatory``).

A waiting operation is *watched* under a key (what may complete it: an answer's correlation id, a
new metadata image, later a partition's high watermark) with a deadline on the node's clock. The
owner asks for what waits on a key when that key's event happens (``take``) and re-watches what
is still not done, and collects what expired on each poll (``expire``); ``next_deadline_ms`` tells
the node when to poll again. Nothing here reads a clock or runs a timer: time comes in as
``now_ms``, so the simulator drives waiting exactly as the server does.

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
        self._deadlines: list[tuple[int, int, K, int]] = []  # (deadline, seq, key, id(op)), lazy
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
        heapq.heappush(self._deadlines, (deadline_ms, seq, key, ident))

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
            _, seq, key, ident = heapq.heappop(heap)
            if self._where.get(ident) != (key, seq):
                continue  # taken or removed meanwhile (or re-watched: then a newer entry stands)
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
        while heap and self._where.get(heap[0][3]) != (heap[0][2], heap[0][1]):
            heapq.heappop(heap)  # drop entries of operations no longer waiting there
        return heap[0][0] if heap else None
