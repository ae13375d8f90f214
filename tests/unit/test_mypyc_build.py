"""What the long sweeps' mypyc build (``benchmarks/long_sweep.py``, ``make sweep``) cannot load.

Building it takes six minutes, so no test builds it, and a change that breaks it used to show only
at the next sweep. Two kinds of class did so, each a dataclass in a compiled module that imports
fine interpreted:

- a field annotated plain ``object`` (mypyc fails at import: ``KeyError: 'object'``);
- ``order=True`` beside a hand-written comparison method (mypyc compiles ``__eq__`` into the class's
  comparison slot, and the dataclass then refuses to add ``__lt__``: "Cannot overwrite attribute").

These checks read the compiled modules' AST; each has a planted class proving it catches its case.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

import kraft

ROOT = Path(__file__).resolve().parents[2]
# The build's own lists of what it compiles (loaded from its file: benchmarks/ is no package).
_SPEC = importlib.util.spec_from_file_location("long_sweep", ROOT / "benchmarks" / "long_sweep.py")
assert _SPEC is not None and _SPEC.loader is not None
long_sweep = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(long_sweep)

PACKAGE_DIR = Path(kraft.__file__).parent
_COMPARISONS = {"__eq__", "__lt__", "__le__", "__gt__", "__ge__"}


def compiled_modules() -> list[Path]:
    """What the build compiles: kraft.raft whole, and its list of modules of the other packages."""
    others: list[Path] = long_sweep.compiled_modules(PACKAGE_DIR)
    return sorted((PACKAGE_DIR / "raft").rglob("*.py")) + others


def _dataclass_keywords(node: ast.ClassDef) -> dict[str, object] | None:
    """The keywords of the class's ``@dataclass(...)`` (empty for a bare ``@dataclass``), else None."""
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name == "dataclass":
            if call is None:
                return {}
            return {
                k.arg: (k.value.value if isinstance(k.value, ast.Constant) else k.value)
                for k in call.keywords
                if k.arg
            }
    return None


def problems(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        keywords = _dataclass_keywords(node)
        if keywords is None:
            continue
        for item in node.body:
            annotation = item.annotation if isinstance(item, ast.AnnAssign) else None
            typed: object = None  # the annotation's text when it is a plain name or a string
            if isinstance(annotation, ast.Name):
                typed = annotation.id
            elif isinstance(annotation, ast.Constant):
                typed = annotation.value
            if typed == "object":
                found.append(f"{where}: {node.name}: a dataclass field typed plain object")
        if keywords.get("order") is True:
            written = {i.name for i in node.body if isinstance(i, ast.FunctionDef)} & _COMPARISONS
            if written:
                found.append(f"{where}: {node.name}: order=True beside {sorted(written)}")
    return found


def test_the_compiled_modules_hold_no_class_the_mypyc_build_cannot_load() -> None:
    modules = compiled_modules()
    assert len(modules) > 80  # the build compiles about ninety
    found = [p for path in modules for p in problems(path.read_text(), str(path.relative_to(PACKAGE_DIR)))]
    assert found == []


@pytest.mark.parametrize(
    "planted",
    [
        "@dataclass(slots=True)\nclass A:\n    seen: object = None\n",
        "@dataclasses.dataclass\nclass A:\n    seen: 'object'\n",
        "@dataclass(frozen=True, order=True)\nclass A:\n    x: int\n    def __eq__(self, o): return True\n",
    ],
)
def test_each_check_catches_its_planted_class(planted: str) -> None:
    assert problems(planted, "planted.py")


def test_what_the_build_takes_is_not_flagged() -> None:
    fine = (
        "@dataclass(slots=True)\nclass A:\n    seen: object | None = None\n    x: int = 0\n"
        "@dataclass(frozen=True, slots=True)\nclass B:\n    x: int\n    def __eq__(self, o): return True\n"
        "    def __lt__(self, o): return True\n"
        "class C:\n    seen: object = None\n"
    )
    assert problems(fine, "fine.py") == []
