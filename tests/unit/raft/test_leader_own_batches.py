"""A leader hands its own appended batches to its listeners as it appended them (Kafka's leader
does the same), never decoding them back from its log; once it is no longer that epoch's leader,
those copies are dropped, since a new leader may truncate the log under them."""

from __future__ import annotations

from typing import Any

import pytest
from clusters import RaftCluster

from kraft.raft import listener as listener_module
from kraft.raft.states import Role


def test_a_single_voter_leader_never_decodes_its_own_data_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[bool] = []  # is_control of every batch decoded for a listener
    real = listener_module.decode_batch_values

    def spy(data: Any, pos: int = 0, from_offset: int | None = None) -> Any:
        header, values = real(data, pos, from_offset)
        decoded.append(header.is_control)
        return header, values

    monkeypatch.setattr(listener_module, "decode_batch_values", spy)
    c = RaftCluster([1])
    leader = c.elected_leader()
    want = []
    last = 0
    for i in range(30):
        batch = [b"r%d-%d" % (i, j) for j in range(i % 4 + 1)]
        want.extend(batch)
        last = leader.schedule_append(leader.epoch, batch)
        c.run_for(5)
    c.run_until(lambda: (leader.high_watermark or 0) > last)
    c.run_for(5)
    assert c.listeners[1].values() == want
    assert decoded and all(decoded), "only control batches are read back from the log"
    assert not leader._own_batches  # every listener has them: nothing kept


def test_a_deposed_leader_delivers_the_new_leaders_records_not_its_own_uncommitted_ones() -> None:
    c = RaftCluster([1, 2, 3], fetch_timeout_ms=500, election_timeout_ms=200)
    old = c.elected_leader()
    old_id = old.node_id
    last = old.schedule_append(old.epoch, [b"a"])
    c.run_until(lambda: all((c.nodes[n].high_watermark or 0) > last for n in c.nodes))
    # Cut off, the old leader appends a batch that can never commit.
    c.cut_off(old_id)
    old.schedule_append(old.epoch, [b"stale"])
    c.run_until(lambda: (now := c.leader()) is not None and now.node_id != old_id)
    new = c.leader()
    assert new is not None
    new_last = new.schedule_append(new.epoch, [b"fresh"])
    c.run_until(lambda: (new.high_watermark or 0) > new_last)
    c.reconnect(old_id)
    c.run_until(lambda: (old.high_watermark or 0) > new_last)
    c.run_for(5)
    assert old.role is Role.FOLLOWER
    assert c.listeners[old_id].values() == [b"a", b"fresh"]
    assert c.listeners[old_id].values() == c.listeners[new.node_id].values()
