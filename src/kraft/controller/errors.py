"""Whole-request error answers in each controller API's own shape (NOT_CONTROLLER, INVALID_REQUEST,
UNKNOWN_SERVER_ERROR), as Kafka's ``getErrorResponse`` builds them: per-topic or per-resource
errors where the API has no top-level error code.

``request`` is the decoded request when it is known; ``like`` is a success response whose rows
(topic names, resources) the error answer should mirror when the request is no longer at hand.
"""

from __future__ import annotations

from typing import Any

from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_partitions,
    create_topics,
    delete_topics,
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
}


def error_response(key: int, version: int, request: Any, code: ErrorCode, *, like: Any = None) -> Any:
    message = _MESSAGES.get(code, code.name)
    c = int(code)
    if key == 19:
        cls: Any = create_topics.RESPONSE.cls
        names = [t.name for t in request.topics] if request is not None else [t.name for t in like.topics]
        return cls(
            throttle_time_ms=0,
            topics=[cls.CreatableTopicResult(name=n, error_code=c, error_message=message) for n in names],
        )
    if key == 20:
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
    if key == 37:
        cls = create_partitions.RESPONSE.cls
        names = [t.name for t in request.topics] if request is not None else [r.name for r in like.results]
        return cls(
            throttle_time_ms=0,
            results=[
                cls.CreatePartitionsTopicResult(name=n, error_code=c, error_message=message) for n in names
            ],
        )
    if key == 32:
        cls = describe_configs.RESPONSE.cls
        resources = request.resources if request is not None else like.results
        return cls(
            throttle_time_ms=0,
            results=[
                cls.DescribeConfigsResult(
                    error_code=c,
                    error_message=message,
                    resource_type=r.resource_type,
                    resource_name=r.resource_name,
                    configs=[],
                )
                for r in resources
            ],
        )
    if key == 44:
        cls = incremental_alter_configs.RESPONSE.cls
        resources = request.resources if request is not None else like.responses
        return cls(
            throttle_time_ms=0,
            responses=[
                cls.AlterConfigsResourceResponse(
                    error_code=c,
                    error_message=message,
                    resource_type=r.resource_type,
                    resource_name=r.resource_name,
                )
                for r in resources
            ],
        )
    if key == 43:
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
    if key == 56:
        return alter_partition.RESPONSE.cls(throttle_time_ms=0, error_code=c, topics=[])
    if key == 57:
        return update_features.RESPONSE.cls(
            throttle_time_ms=0, error_code=c, error_message=message, results=[]
        )
    if key == 62:
        return broker_registration.RESPONSE.cls(throttle_time_ms=0, error_code=c, broker_epoch=-1)
    if key == 63:
        return broker_heartbeat.RESPONSE.cls(
            throttle_time_ms=0, error_code=c, is_caught_up=False, is_fenced=True, should_shut_down=False
        )
    if key == 64:
        return unregister_broker.RESPONSE.cls(throttle_time_ms=0, error_code=c, error_message=message)
    raise ValueError(f"no error response shape for API {key}")


def response_error_codes(key: int, response: Any) -> set[int]:
    """Every error code a controller API response carries, top level and per item (so a caller can
    ask "did any part say NOT_CONTROLLER?" without knowing each API's shape)."""
    codes: set[int] = set()
    top = getattr(response, "error_code", None)
    if isinstance(top, int):
        codes.add(top)
    if key == 19:
        codes.update(t.error_code for t in response.topics)
    elif key == 20:
        codes.update(r.error_code for r in response.responses)
    elif key == 37:
        codes.update(r.error_code for r in response.results)
    elif key == 44:
        codes.update(r.error_code for r in response.responses)
    elif key == 43:
        for t in response.replica_election_results:
            codes.update(p.error_code for p in t.partition_result)
    elif key == 57:
        codes.update(r.error_code for r in (getattr(response, "results", None) or ()))
    return codes
