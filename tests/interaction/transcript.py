"""A small data-driven test runner in the style of etcd's raft interaction tests.

A transcript is a text file of directives. Each directive is one command line (a name, positional
arguments and ``key=value`` arguments; a value may be a tuple ``(1,2,3)``), a line ``----``, and
the expected output, up to the next blank line or the end of the file::

    # a comment, kept as it is
    tick 1 ms=2000
    ----
    1 Unattached(epoch=0) -> Prospective(epoch=0)
    1->2 Vote pre_vote=true epoch=0 last=(0, 0)

``run_transcript`` runs every command against an environment (anything with
``handle(Command) -> list[str]``) and returns the file as it would read with the actual output
in place of the expected one; the test compares the two, and ``--rewrite`` writes the new text
so that a change of behaviour is reviewed as a diff. Output never holds a blank line (the
environment prints ``ok`` for a command without output), so a blank line always ends a block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

SEPARATOR = "----"
_TOKEN = re.compile(r"(?P<key>[A-Za-z_][\w-]*)=(?P<value>\([^)]*\)|\S+)|(?P<word>\S+)")


class TranscriptError(Exception):
    """A malformed transcript or command (the file's fault, not the code under test)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One directive: ``name`` and its arguments, with where it stands in its file."""

    name: str
    args: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    where: str = ""

    def int_arg(self, index: int) -> int:
        try:
            return int(self.args[index])
        except (IndexError, ValueError):
            raise TranscriptError(
                f"{self.where}: {self.name} needs an integer argument {index + 1}"
            ) from None

    def ints(self) -> list[int]:
        """Every positional argument as an integer (e.g. node ids)."""
        return [self.int_arg(i) for i in range(len(self.args))]

    def opt_int(self, key: str, default: int | None = None) -> int:
        value = self.options.get(key)
        if value is None:
            if default is None:
                raise TranscriptError(f"{self.where}: {self.name} needs {key}=N")
            return default
        return int(value)

    def opt_ints(self, key: str) -> list[int] | None:
        """``key=(1,2,3)`` (or ``key=1``) as a list of integers; None when absent."""
        value = self.options.get(key)
        if value is None:
            return None
        inner = value[1:-1] if value.startswith("(") and value.endswith(")") else value
        return [int(v) for v in inner.replace(",", " ").split()]


def parse_command(line: str, where: str = "") -> Command:
    name, *rest = line.split(None, 1)
    args: list[str] = []
    options: dict[str, str] = {}
    for m in _TOKEN.finditer(rest[0] if rest else ""):
        if m.group("key") is not None:
            options[m.group("key")] = m.group("value")
        else:
            args.append(m.group("word"))
    return Command(name, tuple(args), options, where)


@dataclass(frozen=True, slots=True)
class Block:
    """One directive of a file: its command line (as written) and the expected output lines."""

    line_no: int
    command: str
    expected: tuple[str, ...]


def parse_transcript(text: str) -> Iterator[str | Block]:
    """The file as prose lines (comments, blank lines) and directive blocks, in order."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            yield line
            i += 1
            continue
        if i + 1 >= len(lines) or lines[i + 1] != SEPARATOR:
            raise TranscriptError(f"line {i + 1}: command {line!r} is not followed by {SEPARATOR!r}")
        start, i = i, i + 2
        expected: list[str] = []
        while i < len(lines) and lines[i].strip():
            expected.append(lines[i])
            i += 1
        yield Block(start + 1, line, tuple(expected))


class Environment(Protocol):
    def handle(self, command: Command) -> list[str]: ...


def run_transcript(path: Path, make_env: Callable[[], Environment]) -> tuple[str, str]:
    """Runs ``path`` in a fresh environment; returns (the file's text, the text with actual output)."""
    text = path.read_text()
    env = make_env()
    out: list[str] = []
    for item in parse_transcript(text):
        if isinstance(item, str):
            out.append(item)
            continue
        command = parse_command(item.command, f"{path.name}:{item.line_no}")
        actual = env.handle(command) or ["ok"]
        if any(not line.strip() for line in actual):
            raise TranscriptError(f"{command.where}: output with a blank line: {actual!r}")
        out.extend([item.command, SEPARATOR, *actual])
    return text, "\n".join(out) + "\n"
