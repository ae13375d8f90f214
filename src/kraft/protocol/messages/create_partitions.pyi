"""Typed view of ``kraft.protocol.messages.create_partitions`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class CreatePartitionsRequest(StructValue):
    class CreatePartitionsTopic(StructValue):
        class CreatePartitionsAssignment(StructValue): broker_ids: list[int] = ...
        name: str = ...; count: int = ...; assignments: list[CreatePartitionsAssignment] | None = ...
    topics: list[CreatePartitionsTopic] = ...; timeout_ms: int = ...; validate_only: bool = ...
class CreatePartitionsResponse(StructValue):
    class CreatePartitionsTopicResult(StructValue): name: str = ...; error_code: int = ...; error_message: str | None = ...
    throttle_time_ms: int = ...; results: list[CreatePartitionsTopicResult] = ...

REQUEST: StructType[CreatePartitionsRequest]
RESPONSE: StructType[CreatePartitionsResponse]
API: Api
