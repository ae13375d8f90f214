"""The core must stay sans-IO: no sockets, threads, clocks, OS access or global randomness."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kraft.raft

BANNED_MODULES = {"socket", "asyncio", "threading", "time", "os", "selectors", "subprocess"}
RAFT_DIR = Path(kraft.raft.__file__).parent
MODULES = sorted(RAFT_DIR.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_raft_module_is_sans_io(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            problems += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in BANNED_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in BANNED_MODULES:
            problems.append(f"from {node.module} import ...")
        elif isinstance(node, ast.ImportFrom) and node.module == "random":
            problems.append("from random import ... (use the injected random.Random)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "uuid" and node.func.attr in ("uuid1", "uuid4"):
                problems.append(f"uuid.{node.func.attr}() at line {node.lineno}")
            if isinstance(owner, ast.Name) and owner.id == "random" and node.func.attr != "Random":
                problems.append(f"random.{node.func.attr}() at line {node.lineno}")
    assert not problems, f"{path.name}: {problems}"


def test_guard_sees_every_core_module() -> None:
    names = {p.name for p in MODULES}
    assert {"node.py", "quorum_state.py", "log.py", "vote.py", "fetch.py"} <= names
