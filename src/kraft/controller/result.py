"""What a controller handler returns: records to append atomically, and the response to send once
they commit (Kafka's ``ControllerResult``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kraft.metadata.records import ApiMessageAndVersion

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ControllerResult(Generic[R]):
    """``records`` (possibly none) and ``response``. Handlers never mutate state: the caller appends
    the records as one batch, applies them to its in-memory image, and sends ``response`` only when
    the batch has committed (at once when there are no records)."""

    records: tuple[ApiMessageAndVersion, ...]
    response: R
    # Counters the caller adds to its metrics when the records commit (e.g. unclean elections).
    stats: dict[str, int] = field(default_factory=dict)
    # With no records: an offset the raft layer wrote for the request (kraft.version's control
    # records), whose commit the response waits for. None: answer at once.
    commit_offset: int | None = None


def result(
    records: list[ApiMessageAndVersion] | tuple[ApiMessageAndVersion, ...],
    response: Any,
    stats: dict[str, int] | None = None,
) -> ControllerResult[Any]:
    return ControllerResult(tuple(records), response, stats or {})
