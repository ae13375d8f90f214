"""``kraft.client`` is a library under the tools: it never imports the tools (``kraft.cli``), the
Spark pipeline (``kraft.spark``) or the simulator (``kraft.sim``), which import it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kraft

CLIENT_DIR = Path(kraft.__file__).parent / "client"
MODULES = sorted(CLIENT_DIR.rglob("*.py"))
NEVER = {"cli", "spark", "sim"}


def test_the_client_package_has_its_modules() -> None:
    names = {p.stem for p in MODULES}
    assert {"connection", "admin", "broker_admin", "controller", "quorum_info", "quorum_tail"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_client_module_imports_no_tool(path: Path) -> None:
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kraft."):
            imported.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            imported |= {a.name.split(".")[1] for a in node.names if a.name.startswith("kraft.")}
    assert not imported & NEVER, (
        f"client/{path.name} imports kraft.{', kraft.'.join(sorted(imported & NEVER))}"
    )
