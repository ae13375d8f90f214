"""Golden wire vectors: ``encode(decode(b)) == b`` for annotated hex files in tests/golden/protocol.

File format: ``# key: value`` metadata lines (``kind`` request|response, ``api_key``, ``version``,
optionally ``api: <module>.<NAME>`` naming the ``Api`` that serves it when it is not the registry's,
e.g. ``fetch.CLIENT_API`` for Fetch as a broker serves it to consumers, any number of ``source``
lines saying where the bytes came from, and ``expect: path = literal`` checks on the decoded
message, a UUID written as its string), then lines of ``hex bytes ; annotation``. Requests include
their request header (v1 or v2, by the API version); responses their response header (v0 or v1).
``make_protocol_vector.py`` writes such a file from kafka-python's encoder.
"""

from __future__ import annotations

import ast
import importlib
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from kraft.protocol.api import Api, decode_request, decode_response, encode_request, encode_response
from kraft.protocol.messages import REGISTRY

VECTORS = sorted((Path(__file__).parent / "protocol").glob("*.hex"))


def _parse(path: Path) -> tuple[dict[str, str], list[str], bytes]:
    meta: dict[str, str] = {}
    expects: list[str] = []
    hex_parts: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            m = re.match(r"#\s*(\w+):\s*(.*)$", line)
            if m and m.group(1) == "expect":
                expects.append(m.group(2))
            elif m and m.group(1) != "source":
                meta[m.group(1)] = m.group(2).strip()
            continue
        hex_parts.append(line.split(";", 1)[0].replace(" ", ""))
    return meta, expects, bytes.fromhex("".join(hex_parts))


def _resolve(root: dict[str, Any], path: str) -> Any:
    obj: Any = None
    for i, token in enumerate(re.findall(r"[A-Za-z_]\w*|\[\d+\]", path)):
        if i == 0:
            obj = root[token] if token in root else getattr(root["body"], token)
        elif token.startswith("["):
            obj = obj[int(token[1:-1])]
        else:
            obj = getattr(obj, token)
    return obj


def _serving(meta: dict[str, str]) -> tuple[Api, dict[int, Api]]:
    """The vector's Api and a registry in which it serves its key."""
    if "api" not in meta:
        api = REGISTRY[int(meta["api_key"])]
        return api, REGISTRY
    module_name, name = meta["api"].split(".")
    api = getattr(importlib.import_module(f"kraft.protocol.messages.{module_name}"), name)
    assert isinstance(api, Api) and api.key == int(meta["api_key"])
    return api, {**REGISTRY, api.key: api}


def test_there_are_vectors_for_every_api() -> None:
    names = {_parse(p)[0]["api_key"] for p in VECTORS}
    assert names == {str(k) for k in REGISTRY}


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_golden_vector_decodes_and_reencodes_to_the_same_bytes(path: Path) -> None:
    meta, expects, data = _parse(path)
    api, registry = _serving(meta)
    version = int(meta["version"])
    root: dict[str, Any]
    if meta["kind"] == "request":
        header, body = decode_request(data, registry)
        assert (header.api_key, header.api_version) == (api.key, version)
        assert encode_request(api, version, header.correlation_id, body, client_id=header.client_id) == data
        root = {"header": header, "body": body}
    else:
        correlation_id, body = decode_response(data, api, version)
        assert encode_response(api, version, correlation_id, body) == data
        root = {"correlation_id": correlation_id, "body": body}
    for expect in expects:
        lhs, rhs = expect.split(" = ", 1)
        actual = _resolve(root, lhs.strip())
        if isinstance(actual, uuid.UUID):  # written as its string form ('0a000000-...-00000000000a')
            actual = str(actual)
        assert actual == ast.literal_eval(rhs.strip()), expect
