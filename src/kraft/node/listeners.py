"""What each kind of listener serves: the APIs it implements and advertises in ApiVersions.

A controller listener (``controller.listener.names``) serves the raft RPCs, the controller APIs and
the quorum's admin APIs; a broker listener serves the client APIs (``kraft.broker.client_apis``).
A new API is added here and to the part that answers it (``kraft.node.node`` routes by envelope).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kraft.broker.client_apis import BROKER_APIS
from kraft.controller.quorum_controller import CONTROLLER_APIS
from kraft.protocol.api import Api
from kraft.protocol.messages import (
    add_raft_voter,
    api_versions,
    begin_quorum_epoch,
    describe_cluster,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    metadata,
    remove_raft_voter,
    update_raft_voter,
    vote,
)

# Raft RPCs between quorum members: they travel as the raft core's own envelopes.
RAFT_PEER_APIS: Final[Mapping[int, Api]] = {
    m.API.key: m.API
    for m in (vote, begin_quorum_epoch, end_quorum_epoch, fetch, fetch_snapshot, update_raft_voter)
}
CONTROLLER_LISTENER_APIS: Final[Mapping[int, Api]] = dict(
    sorted(
        {
            **RAFT_PEER_APIS,
            **{m.API.key: m.API for m in (api_versions, metadata, describe_cluster, describe_quorum)},
            **{m.API.key: m.API for m in (add_raft_voter, remove_raft_voter)},
            **CONTROLLER_APIS,
        }.items()
    )
)
BROKER_LISTENER_APIS: Final[Mapping[int, Api]] = dict(sorted(BROKER_APIS.items()))
