"""Typed view of ``kraft.protocol.messages.allocate_producer_ids`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class AllocateProducerIdsRequest(StructValue): broker_id: int = ...; broker_epoch: int = ...
class AllocateProducerIdsResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; producer_id_start: int = ...; producer_id_len: int = ...

REQUEST: StructType[AllocateProducerIdsRequest]
RESPONSE: StructType[AllocateProducerIdsResponse]
API: Api
