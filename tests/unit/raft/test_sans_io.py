"""The cores must stay sans-IO: no sockets, threads, clocks, OS access or global randomness.

The cores are the raft state machine, the metadata records and image, the quorum controller and
the broker's state machines (STYLE.md section 2). Imports also point inwards only (section 1).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kraft

BANNED_MODULES = {"socket", "asyncio", "threading", "time", "os", "selectors", "subprocess"}
# The Spark pipeline's heavy dependencies (the kraft[spark] extra): never needed by a core.
BANNED_MODULES |= {"pyspark", "pyarrow", "pandas", "matplotlib"}
PACKAGE_DIR = Path(kraft.__file__).parent
CORES = ("raft", "metadata", "controller", "broker")
MODULES = sorted(p for core in CORES for p in (PACKAGE_DIR / core).rglob("*.py"))
# What each core may import from kraft (besides itself): inwards only, never the shells.
ALLOWED = {
    "raft": {"common", "protocol", "records"},
    "metadata": {"common", "protocol", "records", "raft"},
    "controller": {"common", "protocol", "records", "raft", "metadata"},
    "broker": {"common", "protocol", "records", "raft", "metadata", "controller"},
}


def _ids(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_core_module_is_sans_io(path: Path) -> None:
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


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_core_module_imports_point_inwards(path: Path) -> None:
    core = path.relative_to(PACKAGE_DIR).parts[0]
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kraft."):
            imported.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            imported |= {a.name.split(".")[1] for a in node.names if a.name.startswith("kraft.")}
    outward = imported - ALLOWED[core] - {core}
    assert not outward, f"{core}/{path.name} imports kraft.{', kraft.'.join(sorted(outward))}"


def test_guard_sees_every_core_module() -> None:
    names = {_ids(p) for p in MODULES}
    assert {"raft/node.py", "raft/quorum_state.py", "raft/log.py", "raft/vote.py", "raft/fetch.py"} <= names
    assert {"metadata/image.py", "controller/quorum_controller.py", "broker/__init__.py"} <= names
