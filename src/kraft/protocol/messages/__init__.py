"""One module per API, each declaring ``REQUEST``, ``RESPONSE`` and ``API``; ``REGISTRY`` maps api key -> Api.

Schemas follow Kafka's JSON message definitions field for field (names, versions, nullable and
tagged versions, tags, defaults, ``ignorable``); see each module for where we depart and why.
"""

from kraft.protocol.api import Api
from kraft.protocol.messages import (
    add_raft_voter,
    allocate_producer_ids,
    alter_partition,
    api_versions,
    begin_quorum_epoch,
    broker_heartbeat,
    broker_registration,
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_quorum,
    describe_topic_partitions,
    elect_leaders,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
    remove_raft_voter,
    sasl_authenticate,
    sasl_handshake,
    unregister_broker,
    update_features,
    update_raft_voter,
    vote,
)

_MODULES = (
    produce,
    fetch,
    list_offsets,
    metadata,
    api_versions,
    create_topics,
    delete_topics,
    describe_configs,
    sasl_handshake,
    elect_leaders,
    create_partitions,
    sasl_authenticate,
    incremental_alter_configs,
    vote,
    begin_quorum_epoch,
    end_quorum_epoch,
    describe_quorum,
    alter_partition,
    update_features,
    fetch_snapshot,
    describe_cluster,
    broker_registration,
    broker_heartbeat,
    describe_topic_partitions,
    add_raft_voter,
    remove_raft_voter,
    update_raft_voter,
    unregister_broker,
    init_producer_id,
    offset_for_leader_epoch,
    allocate_producer_ids,
)

REGISTRY: dict[int, Api] = {m.API.key: m.API for m in _MODULES}

if len(REGISTRY) != len(_MODULES):  # pragma: no cover - a copy-paste slip in a module's key
    raise AssertionError("two message modules declare the same API key")
