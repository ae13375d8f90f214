"""What each kind of listener serves (``kraft.node.listeners``), as Kafka's ApiKeys list them."""

from __future__ import annotations

from kraft.net.codecs import RAFT_APIS
from kraft.node.listeners import BROKER_LISTENER_APIS, CONTROLLER_LISTENER_APIS, RAFT_PEER_APIS
from kraft.protocol.messages import (
    add_raft_voter,
    api_versions,
    begin_quorum_epoch,
    create_topics,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    metadata,
    remove_raft_voter,
    update_raft_voter,
    vote,
)


def test_a_broker_listener_serves_add_and_remove_raft_voter_but_not_update_raft_voter() -> None:
    # Kafka's message specs: AddRaftVoter and RemoveRaftVoter list "controller" and "broker";
    # UpdateRaftVoter only "controller" (a controller sends it about itself).
    assert (
        BROKER_LISTENER_APIS[80] is add_raft_voter.API and BROKER_LISTENER_APIS[81] is remove_raft_voter.API
    )
    assert update_raft_voter.API.key not in BROKER_LISTENER_APIS


def test_a_controller_listener_serves_every_raft_api_and_the_voter_changes() -> None:
    assert set(RAFT_APIS) <= set(CONTROLLER_LISTENER_APIS)
    assert {80, 81, 82} <= set(CONTROLLER_LISTENER_APIS)


def test_the_raft_rpcs_between_quorum_members_are_exactly_the_peer_apis() -> None:
    # These reach the core as raft envelopes from the voter they name; the admin ones do not.
    peers = (vote, begin_quorum_epoch, end_quorum_epoch, fetch, fetch_snapshot, update_raft_voter)
    assert set(RAFT_PEER_APIS) == {m.API.key for m in peers}
    assert describe_quorum.API.key not in RAFT_PEER_APIS and add_raft_voter.API.key not in RAFT_PEER_APIS


def test_both_listeners_serve_api_versions_metadata_and_create_topics_but_raft_rpcs_only_controllers() -> (
    None
):
    for apis in (CONTROLLER_LISTENER_APIS, BROKER_LISTENER_APIS):
        assert api_versions.API.key in apis and metadata.API.key in apis and create_topics.API.key in apis
    # A broker listener's Fetch is the data plane's (consumers and followers, v4-17), not raft's.
    assert set(RAFT_PEER_APIS) & set(BROKER_LISTENER_APIS) == {fetch.API.key}
    assert BROKER_LISTENER_APIS[fetch.API.key] is fetch.CLIENT_API
    assert CONTROLLER_LISTENER_APIS[fetch.API.key] is fetch.API
    assert (fetch.CLIENT_API.served.low, fetch.CLIENT_API.served.high) == (4, 17)
