"""The architecture as tests: sans-IO cores and imports that point inwards (STYLE.md sections 1-2).

The cores (the raft state machine, the metadata records and image, the quorum controller, the
broker's state machines and the node that holds them) never touch sockets, threads, clocks, the OS
or global randomness. Every package imports only the layers below it: ``common <- protocol <-
records <- raft <- metadata <- security <- controller | broker <- node``; the shells (storage, net,
server, sim, client, cli, spark) depend on the cores, never the reverse; the broker and the controller are
siblings (the broker never imports the controller); the simulator never imports the command line.

The checks read each module's AST, so an import inside a function counts as much as one at the
top. Each forbidden kind has a planted-import test proving the check would catch it.
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
CORES = ("raft", "metadata", "security", "controller", "broker", "node")
CORE_MODULES = sorted(p for core in CORES for p in (PACKAGE_DIR / core).rglob("*.py"))

_BELOW_RAFT = {"common", "protocol", "records"}
_CORE = _BELOW_RAFT | {"raft", "metadata"}
# What each package may import from kraft (besides itself).
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "protocol": {"common"},
    "records": {"common", "protocol"},
    "raft": set(_BELOW_RAFT),
    "metadata": _BELOW_RAFT | {"raft"},
    # Pure authentication and authorisation logic, beside the image (ACLs, SCRAM credentials).
    "security": set(_CORE),
    "controller": _CORE | {"security"},
    "broker": _CORE | {"security"},  # not the controller: the two are siblings
    "node": _CORE | {"controller", "broker", "security"},
    "storage": set(_CORE),
    "net": _BELOW_RAFT | {"raft", "security"},
    # The blocking clients of the tools; the quorum tail runs a raft observer on the server's driver.
    "client": _CORE | {"net", "node", "server", "security"},
    "server": _CORE | {"controller", "broker", "node", "storage", "net", "security"},
    "sim": _CORE | {"controller", "broker", "node", "storage", "net", "security"},
    "spark": _CORE | {"controller", "broker", "node", "storage", "net", "sim", "client"},
    "cli": _CORE
    | {
        "security",
        "controller",
        "broker",
        "node",
        "storage",
        "net",
        "server",
        "sim",
        "client",
        "spark",
        "__version__",
    },
}
PACKAGES = sorted(p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists())
ALL_MODULES = sorted(p for package in PACKAGES for p in (PACKAGE_DIR / package).rglob("*.py"))


def _ids(path: Path) -> str:
    return str(path.relative_to(PACKAGE_DIR))


def kraft_imports(source: str, filename: str = "<module>") -> set[str]:
    """The kraft packages a module imports (``kraft.X...`` -> ``X``), wherever the import stands."""
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.ImportFrom) and node.module == "kraft":
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kraft."):
            imported.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            imported |= {a.name.split(".")[1] for a in node.names if a.name.startswith("kraft.")}
    return imported


def outward_imports(package: str, source: str) -> set[str]:
    """The imports of a module of ``package`` that point the wrong way."""
    return kraft_imports(source) - ALLOWED[package] - {package}


def sans_io_problems(source: str) -> list[str]:
    problems: list[str] = []
    for node in ast.walk(ast.parse(source)):
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
    return problems


@pytest.mark.parametrize("path", CORE_MODULES, ids=_ids)
def test_core_module_is_sans_io(path: Path) -> None:
    problems = sans_io_problems(path.read_text())
    assert not problems, f"{_ids(path)}: {problems}"


@pytest.mark.parametrize("path", ALL_MODULES, ids=_ids)
def test_module_imports_point_inwards(path: Path) -> None:
    package = path.relative_to(PACKAGE_DIR).parts[0]
    outward = outward_imports(package, path.read_text())
    assert not outward, f"{_ids(path)} imports kraft.{', kraft.'.join(sorted(outward))}"


def test_every_package_has_a_rule() -> None:
    assert set(PACKAGES) <= set(ALLOWED), f"no import rule for {sorted(set(PACKAGES) - set(ALLOWED))}"


def test_guard_sees_every_core_module() -> None:
    names = {_ids(p) for p in CORE_MODULES}
    assert {"raft/node.py", "raft/quorum_state.py", "raft/log.py", "raft/vote.py", "raft/fetch.py"} <= names
    assert {
        "metadata/image.py",
        "controller/quorum_controller.py",
        "broker/broker.py",
        "node/node.py",
    } <= names


# -- planted imports: each forbidden kind must be caught --------------------------------------------

FORBIDDEN = [
    ("broker", "controller"),  # siblings
    ("sim", "cli"),
    ("sim", "spark"),
    ("raft", "net"),
    ("raft", "metadata"),
    ("metadata", "server"),
    ("metadata", "controller"),
    ("controller", "broker"),
    ("controller", "cli"),
    ("broker", "spark"),
    ("broker", "net"),
    ("node", "net"),
    ("node", "server"),
    ("protocol", "raft"),
    ("net", "server"),
    ("storage", "net"),
    ("client", "cli"),
    ("client", "spark"),
    ("client", "sim"),
]
SHAPES = [
    "from kraft.{target}.module import name\n",
    "import kraft.{target}.module\n",
    "from kraft import {target}\n",
    "def f() -> None:\n    from kraft.{target} import x\n",
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("package", "target"), FORBIDDEN)
def test_a_planted_outward_import_is_caught(package: str, target: str, shape: str) -> None:
    assert outward_imports(package, shape.format(target=target)) == {target}


@pytest.mark.parametrize(
    "source",
    [
        "import socket\n",
        "import asyncio\n",
        "from threading import Thread\n",
        "import time\n",
        "from random import random\n",
        "import random\nrandom.randint(1, 2)\n",
        "import uuid\nuuid.uuid4()\n",
        "import pyspark\n",
    ],
)
def test_a_planted_io_import_is_caught(source: str) -> None:
    assert sans_io_problems(source)


def test_an_injected_random_and_inward_imports_pass() -> None:
    assert sans_io_problems("import random\nrng = random.Random(1)\n") == []
    assert outward_imports("broker", "from kraft.metadata.image import MetadataImage\n") == set()
