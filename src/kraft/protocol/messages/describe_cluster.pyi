"""Typed view of ``kraft.protocol.messages.describe_cluster`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeClusterRequest(StructValue): include_cluster_authorized_operations: bool = ...; endpoint_type: int = ...; include_fenced_brokers: bool = ...
class DescribeClusterResponse(StructValue):
    class DescribeClusterBroker(StructValue): broker_id: int = ...; host: str = ...; port: int = ...; rack: str | None = ...; is_fenced: bool = ...
    throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...; endpoint_type: int = ...; cluster_id: str = ...; controller_id: int = ...; brokers: list[DescribeClusterBroker] = ...; cluster_authorized_operations: int = ...

REQUEST: StructType[DescribeClusterRequest]
RESPONSE: StructType[DescribeClusterResponse]
API: Api
