"""TopicIdPartition's hand-written hash, equality and order are the generated dataclass ones'."""

from __future__ import annotations

import random
import uuid

import pytest

from kraft.metadata.image import TopicIdPartition


def _some(rng: random.Random, n: int) -> list[TopicIdPartition]:
    topics = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(5)]
    return [TopicIdPartition(rng.choice(topics), rng.randrange(4)) for _ in range(n)]


def test_hash_and_equality_are_those_of_the_fields_tuple() -> None:
    rng = random.Random(7)
    for a, b in zip(_some(rng, 200), _some(rng, 200), strict=True):
        # The generated hash was hash((topic_id, partition_id)): sets keep iterating in that order.
        assert hash(a) == hash((a.topic_id, a.partition_id))
        assert (a == b) == ((a.topic_id, a.partition_id) == (b.topic_id, b.partition_id))
        assert a == TopicIdPartition(uuid.UUID(int=a.topic_id.int), a.partition_id)
    assert TopicIdPartition(uuid.UUID(int=1), 0) != (uuid.UUID(int=1), 0)


def test_order_is_order_true_s_and_refuses_other_types() -> None:
    rng = random.Random(8)
    tps = _some(rng, 300)
    assert sorted(tps) == sorted(tps, key=lambda tp: (tp.topic_id, tp.partition_id))
    for a, b in zip(tps, reversed(tps), strict=True):
        ka, kb = (a.topic_id, a.partition_id), (b.topic_id, b.partition_id)
        assert (a < b, a <= b, a > b, a >= b) == (ka < kb, ka <= kb, ka > kb, ka >= kb)
    with pytest.raises(TypeError):
        _ = TopicIdPartition(uuid.UUID(int=1), 0) < (uuid.UUID(int=1), 1)  # type: ignore[operator]
