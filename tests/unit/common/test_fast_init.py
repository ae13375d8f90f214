"""kraft.common.fast_init: the same constructor, frozen instances, and classes it must leave alone."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field

import pytest

from kraft.common.fast_init import speed_up_inits
from kraft.raft.messages import Envelope, FetchResponse
from kraft.raft.types import OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class Positional:
    a: int
    b: str = "x"


@dataclass(frozen=True, slots=True, kw_only=True)
class KeywordOnly:
    a: int
    b: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Mixed:
    a: int
    _: dataclasses.KW_ONLY
    b: int = 2


@dataclass(frozen=True, slots=True)
class WithFactory:
    a: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WithPostInit:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


@dataclass(frozen=True)
class NotSlotted:
    a: int


def test_the_sped_up_classes_keep_their_parameters_and_stay_frozen() -> None:
    originals = {cls: inspect.signature(cls.__init__) for cls in (Positional, KeywordOnly, Mixed)}
    speed_up_inits(Positional, KeywordOnly, Mixed)
    for cls, signature in originals.items():
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
        assert [(p.name, p.kind, p.default) for p in inspect.signature(cls.__init__).parameters.values()] == [
            (p.name, p.kind, p.default) for p in signature.parameters.values()
        ]
    assert Positional(1) == Positional(a=1, b="x") and Positional(1, "y").b == "y"
    assert KeywordOnly(a=3) == KeywordOnly(a=3, b=())
    assert Mixed(1, b=5).b == 5
    with pytest.raises(TypeError):
        KeywordOnly(3)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Mixed(1, 5)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Positional(1).a = 2  # type: ignore[misc]


def test_classes_it_cannot_mirror_keep_the_dataclass_constructor() -> None:
    before = {cls: cls.__init__ for cls in (WithFactory, WithPostInit, NotSlotted)}
    speed_up_inits(WithFactory, WithPostInit, NotSlotted)
    assert {cls: cls.__init__ for cls in before} == before
    assert WithFactory().a == [] and WithFactory().a is not WithFactory().a
    with pytest.raises(ValueError, match="negative"):
        WithPostInit(-1)


def test_the_core_messages_use_it() -> None:
    for cls in (Envelope, FetchResponse, OffsetAndEpoch):
        assert "_s0" in cls.__init__.__globals__  # stores through slot setters, not the dataclass's
    assert FetchResponse(high_watermark=5).high_watermark == 5
    assert OffsetAndEpoch(5, 1) < OffsetAndEpoch(5, 2)
