"""Typed view of ``kraft.protocol.messages.create_topics`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class CreateTopicsRequest(StructValue):
    class CreatableTopic(StructValue):
        class CreatableReplicaAssignment(StructValue):
            partition_index: int
            broker_ids: list[int]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                broker_ids: list[int] = ...,
            ) -> None: ...

        class CreatableTopicConfig(StructValue):
            name: str
            value: str | None
            def __init__(
                self,
                *,
                name: str = ...,
                value: str | None = ...,
            ) -> None: ...

        name: str
        num_partitions: int
        replication_factor: int
        assignments: list[CreatableReplicaAssignment]
        configs: list[CreatableTopicConfig]
        def __init__(
            self,
            *,
            name: str = ...,
            num_partitions: int = ...,
            replication_factor: int = ...,
            assignments: list[CreatableReplicaAssignment] = ...,
            configs: list[CreatableTopicConfig] = ...,
        ) -> None: ...

    topics: list[CreatableTopic]
    timeout_ms: int
    validate_only: bool
    def __init__(
        self,
        *,
        topics: list[CreatableTopic] = ...,
        timeout_ms: int = ...,
        validate_only: bool = ...,
    ) -> None: ...

class CreateTopicsResponse(StructValue):
    class CreatableTopicResult(StructValue):
        class CreatableTopicConfigs(StructValue):
            name: str
            value: str | None
            read_only: bool
            config_source: int
            is_sensitive: bool
            def __init__(
                self,
                *,
                name: str = ...,
                value: str | None = ...,
                read_only: bool = ...,
                config_source: int = ...,
                is_sensitive: bool = ...,
            ) -> None: ...

        name: str
        topic_id: uuid.UUID
        error_code: int
        error_message: str | None
        topic_config_error_code: int
        num_partitions: int
        replication_factor: int
        configs: list[CreatableTopicConfigs] | None
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            topic_config_error_code: int = ...,
            num_partitions: int = ...,
            replication_factor: int = ...,
            configs: list[CreatableTopicConfigs] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[CreatableTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[CreatableTopicResult] = ...,
    ) -> None: ...

REQUEST: StructType[CreateTopicsRequest]
RESPONSE: StructType[CreateTopicsResponse]
API: Api
