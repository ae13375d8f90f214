"""The raft RPCs between the core's dataclasses (``kraft.raft.messages``) and Kafka wire bodies.

The core speaks about one partition with typed fields; the wire speaks about topics and partition
lists. One module per API (``vote``, ``begin_quorum_epoch``, ``end_quorum_epoch``, ``fetch``,
``fetch_snapshot``, ``describe_quorum``, ``add_raft_voter``, ``remove_raft_voter``,
``update_raft_voter``) holds both directions: request encode/decode, response encode/decode. Each
exports a ``Codec``; ``CODECS`` maps API key to it, and callers dispatch through that table
(``kraft.raft.rpc.api_key_of`` gives a dataclass's key). ``common`` holds what they share.

Request decoding carries the shape checks the spec places before the core (raft.md 3): a request
naming anything but topic ``__cluster_metadata`` (Fetch: its topic id) partition 0 is answered at
once (``ImmediateResponse``) and never reaches the core; each module says with what. Request
encoding may refuse a version (``EncodeVersionError``: a pre-vote below Vote v2).

No I/O and no state here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kraft.net.codecs import (
    add_raft_voter,
    begin_quorum_epoch,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    remove_raft_voter,
    update_raft_voter,
    vote,
)
from kraft.net.codecs.common import Codec, EncodeVersionError, ImmediateResponse
from kraft.protocol.api import Api

__all__ = ["CODECS", "RAFT_APIS", "Codec", "EncodeVersionError", "ImmediateResponse"]

CODECS: Mapping[int, Codec[Any, Any]] = {
    codec.api.key: codec
    for codec in (
        vote.CODEC,
        begin_quorum_epoch.CODEC,
        end_quorum_epoch.CODEC,
        fetch.CODEC,
        fetch_snapshot.CODEC,
        describe_quorum.CODEC,
        add_raft_voter.CODEC,
        remove_raft_voter.CODEC,
        update_raft_voter.CODEC,
    )
}

# The APIs whose bodies these codecs convert, by key.
RAFT_APIS: Mapping[int, Api] = {key: codec.api for key, codec in CODECS.items()}
