"""Typed view of ``kraft.protocol.messages.init_producer_id`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue, Versions

class InitProducerIdRequest(StructValue): transactional_id: str | None = ...; transaction_timeout_ms: int = ...; producer_id: int = ...; producer_epoch: int = ...; enable2_pc: bool = ...; keep_prepared_txn: bool = ...
class InitProducerIdResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; producer_id: int = ...; producer_epoch: int = ...; ongoing_txn_producer_id: int = ...; ongoing_txn_producer_epoch: int = ...

REQUEST: StructType[InitProducerIdRequest]
RESPONSE: StructType[InitProducerIdResponse]
SERVED_VERSIONS: Versions
API: Api
