"""Typed view of ``kraft.protocol.messages.broker_registration`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class BrokerRegistrationRequest(StructValue):
    class Listener(StructValue): name: str = ...; host: str = ...; port: int = ...; security_protocol: int = ...
    class Feature(StructValue): name: str = ...; min_supported_version: int = ...; max_supported_version: int = ...
    broker_id: int = ...; cluster_id: str = ...; incarnation_id: uuid.UUID = ...; listeners: list[Listener] = ...; features: list[Feature] = ...; rack: str | None = ...; is_migrating_zk_broker: bool = ...; log_dirs: list[uuid.UUID] = ...; previous_broker_epoch: int = ...
class BrokerRegistrationResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; broker_epoch: int = ...

REQUEST: StructType[BrokerRegistrationRequest]
RESPONSE: StructType[BrokerRegistrationResponse]
API: Api
