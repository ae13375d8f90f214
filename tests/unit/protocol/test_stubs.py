"""The committed ``messages/<api>.pyi`` stubs are exactly what the schemas give."""

from __future__ import annotations

import types
from types import ModuleType

import pytest

from kraft.protocol import stubs
from kraft.protocol.api import Api
from kraft.protocol.messages import REGISTRY
from kraft.protocol.schema import INT32, RECORDS, STRING, UUID, FieldType, Versions, array, f, struct

MODULES = stubs.message_modules()


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_committed_stub_matches_its_schema(module: ModuleType) -> None:
    path = stubs.stub_path(module)
    assert path.exists(), f"{path} is missing: run python -m kraft.protocol.stubs"
    assert path.read_text() == stubs.render_stub(module), (
        f"{path} is stale: run python -m kraft.protocol.stubs and commit the result"
    )


def test_every_registered_api_has_a_stubbed_module() -> None:
    assert {m.API.key for m in MODULES} == set(REGISTRY)
    assert stubs.stale_stubs() == []


def _fake_module(**names: object) -> ModuleType:
    module = types.ModuleType("kraft.protocol.messages.fake")
    module.__dict__.update(names)
    return module


def test_stub_types_follow_the_schema() -> None:
    request = struct(
        "FakeRequest",
        [
            f("ClusterId", STRING, "1+", nullable="1+", default=None),
            f("Rack", STRING, "0+", default=None),
            f("Name", STRING, "0+"),
            f("TopicId", UUID, "0+"),
            f("Ids", array(INT32), "0+"),
            f("Items", array(struct("Item", [f("Records", RECORDS, "0+", nullable="0+")])), "0+"),
            f("Inner", struct("Inner", [f("Value", INT32, "0+")]), "0+", nullable="0+"),
        ],
    )
    response = struct("FakeResponse", [])
    api = Api(
        key=999,
        name="Fake",
        versions=Versions(0, 1),
        flexible=Versions(1, 1),
        request=request,
        response=response,
    )
    text = stubs.render_stub(_fake_module(REQUEST=request, RESPONSE=response, API=api, SERVED=Versions(0, 0)))
    for line in (
        "import uuid",
        "class FakeRequest(StructValue):",
        "    class Item(StructValue): records: bytes | None = ...",
        "    class Inner(StructValue): value: int = ...",
        # not nullable on the wire, but null by default: rack is "str | None" too
        "    cluster_id: str | None = ...; rack: str | None = ...; name: str = ...; "
        "topic_id: uuid.UUID = ...; ids: list[int] = ...; items: list[Item] = ...; inner: Inner | None = ...",
        "class FakeResponse(StructValue): ...",
        "REQUEST: StructType[FakeRequest]",
        "RESPONSE: StructType[FakeResponse]",
        "API: Api",
        "SERVED: Versions",
    ):
        assert line in text.splitlines(), line


def test_a_changed_schema_gives_a_different_stub() -> None:
    def render(field_type: FieldType) -> str:
        request = struct("R", [f("X", field_type, "0+")])
        return stubs.render_stub(_fake_module(REQUEST=request))

    assert render(INT32) != render(STRING)


def test_a_module_name_without_a_stub_type_is_refused() -> None:
    with pytest.raises(ValueError, match="no stub type"):
        stubs.render_stub(_fake_module(LIMIT=3))


def test_two_different_nested_structs_of_one_name_are_refused() -> None:
    a = struct("Same", [f("A", INT32, "0+")])
    b = struct("Same", [f("B", INT32, "0+")])
    request = struct("R", [f("X", a, "0+"), f("Y", array(b), "0+")])
    with pytest.raises(ValueError, match="two different structs named Same"):
        stubs.render_stub(_fake_module(REQUEST=request))
