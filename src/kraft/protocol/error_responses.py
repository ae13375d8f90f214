"""Whole-request error answers in each controller API's own shape (NOT_CONTROLLER, INVALID_REQUEST,
UNKNOWN_SERVER_ERROR, REQUEST_TIMED_OUT), as Kafka's ``getErrorResponse`` builds them: per-topic or
per-resource errors where the API has no top-level error code; and the error codes an answer
carries, wherever its API keeps them.

Used by the controller (answers it cannot give) and by a broker forwarding to it (answers the
controller could not give in time); both build the same bytes.

``request`` is the decoded request when it is known; ``like`` is a success response whose rows
(topic names, resources) the error answer should mirror when the request is no longer at hand.
"""

from __future__ import annotations

from typing import Any

from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    allocate_producer_ids,
    alter_partition,
    alter_user_scram_credentials,
    broker_heartbeat,
    broker_registration,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    elect_leaders,
    incremental_alter_configs,
    unregister_broker,
    update_features,
)

_MESSAGES = {
    ErrorCode.NOT_CONTROLLER: "This is not the correct controller for this cluster.",
    ErrorCode.INVALID_REQUEST: "This most likely occurs because of a request being malformed.",
    ErrorCode.UNKNOWN_SERVER_ERROR: "The server experienced an unexpected error when processing the request.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
}


def error_response(key: int, version: int, request: Any, code: ErrorCode, *, like: Any = None) -> Any:
    message = _MESSAGES.get(code, code.name)
    c = int(code)
    if key == create_topics.API.key:
        cls: Any = create_topics.RESPONSE.cls
        names = [t.name for t in request.topics] if request is not None else [t.name for t in like.topics]
        return cls(
            throttle_time_ms=0,
            topics=[cls.CreatableTopicResult(name=n, error_code=c, error_message=message) for n in names],
        )
    if key == delete_topics.API.key:
        cls = delete_topics.RESPONSE.cls
        if request is not None:
            rows = (
                [(t.name, t.topic_id) for t in request.topics]
                if version >= 6
                else [(n, None) for n in request.topic_names]
            )
        else:
            rows = [(r.name, r.topic_id) for r in like.responses]
        return cls(
            throttle_time_ms=0,
            responses=[
                cls.DeletableTopicResult(
                    name=n, **({"topic_id": i} if i is not None else {}), error_code=c, error_message=message
                )
                for n, i in rows
            ],
        )
    if key == create_partitions.API.key:
        cls = create_partitions.RESPONSE.cls
        names = [t.name for t in request.topics] if request is not None else [r.name for r in like.results]
        return cls(
            throttle_time_ms=0,
            results=[
                cls.CreatePartitionsTopicResult(name=n, error_code=c, error_message=message) for n in names
            ],
        )
    if key == describe_configs.API.key:
        cls = describe_configs.RESPONSE.cls
        resources = request.resources if request is not None else like.results
        return cls(
            throttle_time_ms=0,
            results=_resource_errors(cls.DescribeConfigsResult, resources, c, message, configs=[]),
        )
    if key == incremental_alter_configs.API.key:
        cls = incremental_alter_configs.RESPONSE.cls
        resources = request.resources if request is not None else like.responses
        return cls(
            throttle_time_ms=0,
            responses=_resource_errors(cls.AlterConfigsResourceResponse, resources, c, message),
        )
    if key == elect_leaders.API.key:
        cls = elect_leaders.RESPONSE.cls
        if version >= 1:
            return cls(throttle_time_ms=0, error_code=c, replica_election_results=[])
        rows = []
        source = (request.topic_partitions or []) if request is not None else []
        for t in source:
            rows.append(
                cls.ReplicaElectionResult(
                    topic=t.topic,
                    partition_result=[
                        cls.ReplicaElectionResult.PartitionResult(
                            partition_id=p, error_code=c, error_message=message
                        )
                        for p in t.partitions
                    ],
                )
            )
        return cls(throttle_time_ms=0, replica_election_results=rows)
    if key == alter_partition.API.key:
        return alter_partition.RESPONSE.cls(throttle_time_ms=0, error_code=c, topics=[])
    if key == update_features.API.key:
        return update_features.RESPONSE.cls(
            throttle_time_ms=0, error_code=c, error_message=message, results=[]
        )
    if key == broker_registration.API.key:
        return broker_registration.RESPONSE.cls(throttle_time_ms=0, error_code=c, broker_epoch=-1)
    if key == broker_heartbeat.API.key:
        return broker_heartbeat.RESPONSE.cls(
            throttle_time_ms=0, error_code=c, is_caught_up=False, is_fenced=True, should_shut_down=False
        )
    if key == unregister_broker.API.key:
        return unregister_broker.RESPONSE.cls(throttle_time_ms=0, error_code=c, error_message=message)
    if key == allocate_producer_ids.API.key:
        return allocate_producer_ids.RESPONSE.cls(
            throttle_time_ms=0, error_code=c, producer_id_start=0, producer_id_len=0
        )
    if key == alter_user_scram_credentials.API.key:
        # Kafka's AlterUserScramCredentialsRequest.getErrorResponse: every user named, once.
        cls = alter_user_scram_credentials.RESPONSE.cls
        if request is not None:
            users = [d.name for d in request.deletions] + [u.name for u in request.upsertions]
        else:
            users = [r.user for r in like.results]
        return cls(
            throttle_time_ms=0,
            results=[
                cls.AlterUserScramCredentialsResult(user=u, error_code=c, error_message=message)
                for u in dict.fromkeys(users)
            ],
        )
    if key == create_acls.API.key:
        cls = create_acls.RESPONSE.cls
        count = len(request.creations) if request is not None else len(like.results)
        return cls(
            throttle_time_ms=0,
            results=[cls.AclCreationResult(error_code=c, error_message=message) for _ in range(count)],
        )
    if key == delete_acls.API.key:
        cls = delete_acls.RESPONSE.cls
        count = len(request.filters) if request is not None else len(like.filter_results)
        return cls(
            throttle_time_ms=0,
            filter_results=[
                cls.DeleteAclsFilterResult(error_code=c, error_message=message, matching_acls=[])
                for _ in range(count)
            ],
        )
    if key == describe_acls.API.key:
        return describe_acls.RESPONSE.cls(
            throttle_time_ms=0, error_code=c, error_message=message, resources=[]
        )
    if key == describe_cluster.API.key:
        endpoint_type = getattr(request, "endpoint_type", 1) if request is not None else 1
        return describe_cluster.RESPONSE.cls(
            throttle_time_ms=0,
            error_code=c,
            error_message=message,
            endpoint_type=endpoint_type,
            cluster_id="",
            brokers=[],
        )
    raise ValueError(f"no error response shape for API {key}")


def response_error_codes(key: int, response: Any) -> set[int]:
    """Every error code a controller API response carries, top level and per item (so a caller can
    ask "did any part say NOT_CONTROLLER?" without knowing each API's shape)."""
    codes: set[int] = set()
    top = getattr(response, "error_code", None)
    if isinstance(top, int):
        codes.add(top)
    if key == create_topics.API.key:
        codes.update(t.error_code for t in response.topics)
    elif key == delete_topics.API.key:
        codes.update(r.error_code for r in response.responses)
    elif key == create_partitions.API.key:
        codes.update(r.error_code for r in response.results)
    elif key == incremental_alter_configs.API.key:
        codes.update(r.error_code for r in response.responses)
    elif key == elect_leaders.API.key:
        for t in response.replica_election_results:
            codes.update(p.error_code for p in t.partition_result)
    elif key == update_features.API.key:
        codes.update(r.error_code for r in (getattr(response, "results", None) or ()))
    elif key in (alter_user_scram_credentials.API.key, create_acls.API.key):
        codes.update(r.error_code for r in response.results)
    elif key == delete_acls.API.key:
        codes.update(r.error_code for r in response.filter_results)
    return codes


def _resource_errors(
    result_cls: Any, resources: Any, code: int, message: str | None, **fields: Any
) -> list[Any]:
    """One ``result_cls`` per config resource (its type and name) with the error and ``fields``."""
    return [
        result_cls(
            error_code=code,
            error_message=message,
            resource_type=r.resource_type,
            resource_name=r.resource_name,
            **fields,
        )
        for r in resources
    ]
