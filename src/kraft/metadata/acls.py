"""One ACL as the metadata log stores it (Kafka's ``StandardAcl``), keyed by its id in the image.

The fields are the wire codes of ``AccessControlEntryRecord`` (ints, not the enums of
``kraft.security.acls``: this module sits below the security layer, which interprets them). Replay
only checks identity rules (unique ids, no duplicate ACL); what a valid ACL is was decided by the
controller before it wrote the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, order=True)
class StandardAcl:
    """An ACL's resource pattern and entry, as codes and strings (equality is Kafka's: all fields)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int

    @classmethod
    def from_record(cls, data: Any) -> StandardAcl:
        """From an ``AccessControlEntryRecord``'s data (its ``id`` is the key, not a field)."""
        return cls(
            resource_type=data.resource_type,
            resource_name=data.resource_name,
            pattern_type=data.pattern_type,
            principal=data.principal,
            host=data.host,
            operation=data.operation,
            permission_type=data.permission_type,
        )
