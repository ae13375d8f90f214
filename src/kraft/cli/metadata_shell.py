"""``kraft metadata-shell``: browse a metadata image offline, like Kafka's ``kafka-metadata-shell``.

    kraft metadata-shell --snapshot FILE [COMMAND [ARG...]]
    kraft metadata-shell --log-dir DIR [--json] [COMMAND [ARG...]]

Loading (never writes anything):

* ``--snapshot FILE``: one snapshot (``<offset>-<epoch>.checkpoint``, or ``bootstrap.checkpoint``),
  loaded as the controller loads a snapshot (``MetadataLoader.load_snapshot``). Like Kafka's
  ``--snapshot``, a ``.log`` segment is also accepted and replayed from an empty image.
* ``--log-dir DIR``: a metadata log directory (``metadata.log.dir`` or its
  ``__cluster_metadata-0``). The image is built as a controller builds it at start (spec 1.7): the
  latest snapshot, if any, then every batch of the segments after it. Offline the high watermark
  is unknown, so *every* batch in the log is replayed, including any the quorum had not committed
  yet. A partial batch at the end of the last segment (a torn write, which the server truncates
  when it starts) is skipped with a note; a corrupt batch or a record that does not replay is an
  error.

Commands (Kafka's shell; see ``help``): ``ls``, ``cat``, ``tree``, ``find``, ``pwd``, ``cd``,
``help``, ``man``, ``history``, ``exit``. Paths and node texts are Kafka's (``kraft.metadata.metadata_tree``
describes the tree). With a COMMAND on the command line it runs once (one-shot); without one the
shell reads commands from stdin: with a ``>>`` prompt on a terminal, or one command per line from
a pipe.

Differences from Kafka: errors go to stderr (Kafka prints them with the output), and a one-shot
command or a piped script that hit an error exits with status 1; ``--json`` prints machine output
(one JSON value per line: ``ls`` a list of names, ``cat`` ``{"path", "value"}``, ``tree``
``{"path", "tree"}``, ``find`` a list of paths); ``--log-dir`` reads a log directory offline
(Kafka's shell reads a live log through a raft client).

Exit status: 0 success, 1 load failure or failed command, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import mmap
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kraft import __version__
from kraft.cli.common import parse_args, streams
from kraft.common.errors import CorruptRecordError, KraftError
from kraft.metadata import metadata_tree as mt
from kraft.metadata.image import MetadataImage, MetadataLoader, ReplayError
from kraft.raft.listener import CommittedBatch
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import decode_batch, next_batch_size
from kraft.storage.log_dir import METADATA_PARTITION_DIR_NAME, metadata_partition_dir
from kraft.storage.segment_log import SEGMENT_SUFFIX, parse_segment_file_name
from kraft.storage.snapshots import (
    FileRawSnapshotReader,
    list_snapshots,
    parse_snapshot_file_name,
    read_snapshot_contents,
    snapshot_path,
)

PROG = "kraft metadata-shell"


class LoadError(KraftError):
    """The image could not be built; the message names the file and the reason."""


@dataclass(slots=True)
class LoadedImage:
    image: MetadataImage
    description: str
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------
# Loading


def load_snapshot_file(path: str | os.PathLike[str]) -> LoadedImage:
    """The image of one snapshot file (or of one ``.log`` segment replayed from empty).

    Raises:
        LoadError: missing, unreadable, corrupt, or a record that does not replay.
    """
    p = Path(path)
    if p.is_dir():
        raise LoadError(f"{p} is a directory; use --log-dir for a log directory")
    if not p.exists():
        raise LoadError(f"{p}: no such file")
    loader = MetadataLoader()
    if p.name.endswith(SEGMENT_SUFFIX):
        notes: list[str] = []
        count = _replay_segments([p], loader, None, notes)
        return LoadedImage(loader.image, f"{count} batch(es) of {p}", notes)
    snapshot_id = parse_snapshot_file_name(p.name) or OffsetAndEpoch(0, 0)
    _load_snapshot(p, snapshot_id, loader)
    return LoadedImage(loader.image, f"snapshot {p.name}")


def _load_snapshot(path: Path, snapshot_id: OffsetAndEpoch, loader: MetadataLoader) -> None:
    try:
        contents = read_snapshot_contents(FileRawSnapshotReader(path, snapshot_id))
    except (KraftError, OSError) as e:
        raise LoadError(f"cannot read snapshot {path}: {e}") from None
    try:
        loader.load_snapshot(
            snapshot_id.offset,
            snapshot_id.epoch,
            contents.last_contained_log_timestamp_ms,
            [r.value or b"" for r in contents.records],
        )
    except ReplayError as e:
        raise LoadError(f"cannot load snapshot {path}: {e}") from None


def find_partition_dir(directory: str | os.PathLike[str]) -> Path:
    """``DIR/__cluster_metadata-0`` when it exists, else ``DIR`` itself.

    Raises:
        LoadError: DIR is not a directory.
    """
    d = Path(directory)
    if not d.is_dir():
        raise LoadError(f"{d}: no such directory")
    nested = metadata_partition_dir(d)
    return nested if nested.is_dir() else d


def _segments(directory: Path) -> list[Path]:
    found = []
    for name in os.listdir(directory):
        base = parse_segment_file_name(name)
        if base is not None:
            found.append((base, directory / name))
    return [p for _, p in sorted(found)]


def load_log_dir(directory: str | os.PathLike[str]) -> LoadedImage:
    """The image a controller would build from this log: latest snapshot + every batch after it.

    Raises:
        LoadError: nothing to load, missing offsets, a corrupt batch, or a replay error.
    """
    partition = find_partition_dir(directory)
    try:
        snapshots = list_snapshots(partition)
        segments = _segments(partition)
    except OSError as e:
        raise LoadError(f"cannot list {partition}: {e.strerror or e}") from None
    if not snapshots and not segments:
        raise LoadError(
            f"{partition} holds no snapshot (*.checkpoint) and no log segment (*.log); "
            f"pass a metadata.log.dir or its {METADATA_PARTITION_DIR_NAME} directory"
        )
    loader = MetadataLoader()
    notes: list[str] = []
    parts = []
    start = 0
    if snapshots:
        latest = snapshots[-1]
        _load_snapshot(snapshot_path(partition, latest), latest, loader)
        start = latest.offset
        parts.append(f"snapshot {snapshot_path(partition, latest).name}")
    count = _replay_segments(segments, loader, start, notes)
    parts.append(f"{count} log batch(es) after it" if snapshots else f"{count} log batch(es)")
    if loader.in_transaction:
        notes.append(
            "the log ends inside a metadata transaction: its records are not in the image "
            "(the controller would abort it)"
        )
    return LoadedImage(loader.image, f"{partition}: " + " + ".join(parts), notes)


def _replay_segments(
    segments: Sequence[Path], loader: MetadataLoader, start: int | None, notes: list[str]
) -> int:
    """Replays every whole batch at or after ``start`` (None: from the first batch); returns how
    many batches were replayed."""
    expected = start
    replayed = 0
    for index, path in enumerate(segments):
        is_last = index == len(segments) - 1
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size == 0:
                    continue
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    pos = 0
                    while pos < size:
                        try:
                            batch_size = next_batch_size(data, pos, size)
                            problem = "a partial batch" if batch_size is None else None
                        except CorruptRecordError as e:
                            batch_size, problem = None, str(e)
                        batch = None
                        if batch_size is not None:
                            chunk = data[pos : pos + batch_size]  # a copy: nothing outlives the map
                            try:
                                batch = decode_batch(chunk)
                            except CorruptRecordError as e:
                                problem = str(e)
                        if batch is None:
                            # As the server's recovery (SegmentLog): only the last batch of the last
                            # segment may be invalid (a torn write, truncated at start).
                            torn = is_last and (batch_size is None or pos + batch_size == size)
                            if not torn:
                                raise LoadError(f"{path}: position {pos}: {problem}")
                            notes.append(
                                f"{path.name}: skipped {size - pos} byte(s) at position {pos} ({problem}): "
                                "a torn write, which the server truncates when it starts"
                            )
                            break
                        assert batch_size is not None
                        pos += batch_size
                        if expected is not None and batch.last_offset < expected:
                            continue  # inside the snapshot
                        if expected is not None and batch.base_offset > expected:
                            raise LoadError(
                                f"{path}: the log jumps from offset {expected} to {batch.base_offset}: "
                                "offsets in between are missing"
                            )
                        committed = CommittedBatch.from_batch(batch, from_offset=expected)
                        try:
                            if committed.is_control or not committed.records:
                                loader.handle_control_batch(
                                    committed.last_offset, committed.epoch, committed.append_timestamp_ms
                                )
                            else:
                                loader.handle_batch(
                                    committed.base_offset,
                                    committed.epoch,
                                    committed.append_timestamp_ms,
                                    committed.records,
                                )
                        except ReplayError as e:
                            raise LoadError(f"{path}: {e}") from None
                        expected = batch.last_offset + 1
                        replayed += 1
        except OSError as e:
            raise LoadError(f"cannot read {path}: {e.strerror or e}") from None
    return replayed


# ---------------------------------------------------------------------------------------------------
# The shell


@dataclass(frozen=True, slots=True)
class _Command:
    usage: str
    description: str
    run: Callable[[Shell, list[str]], bool]  # returns False on error


class _Exit(Exception):
    pass


class Shell:
    """Runs shell commands over a tree; output to ``out``, error lines to ``err``.

    ``run`` returns False when the command failed (an unknown path, a bad argument).
    """

    def __init__(
        self,
        root: mt.Directory,
        out: TextIO,
        err: TextIO,
        *,
        as_json: bool = False,
        screen_width: int | None = None,
        interactive: bool = False,
    ) -> None:
        self.root = root
        self.out = out
        self.err = err
        self.as_json = as_json
        self.screen_width = screen_width
        self.interactive = interactive
        self.cwd = "/"
        self.history: list[str] = []

    # -- plumbing ---------------------------------------------------------------------------------

    def _print(self, text: str = "") -> None:
        print(text, file=self.out)

    def _error(self, text: str) -> None:
        print(text, file=self.err)

    def _json(self, value: Any) -> None:
        print(json.dumps(value, ensure_ascii=False), file=self.out)

    def run_line(self, line: str) -> bool:
        """One line as typed: split like a shell, recorded in the history, run."""
        if not line.strip():
            return True
        self.history.append(line.strip())
        try:
            words = shlex.split(line)
        except ValueError as e:
            self._error(f"cannot parse the command: {e}")
            return False
        return self.run(words)

    def run(self, words: Sequence[str]) -> bool:
        """Runs one command; raises ``_Exit`` for ``exit``."""
        words = list(words)
        while words and not words[-1]:
            words.pop()
        if not words:
            return True
        command = COMMANDS.get(words[0])
        if command is None:
            self._error(f"unknown command '{words[0]}'; commands: {', '.join(sorted(COMMANDS))} (try 'help')")
            return False
        return command.run(self, words[1:])

    def _resolve(self, path: str) -> list[mt.NodeMatch]:
        return mt.resolve(self.root, self.cwd, path)

    # -- commands ---------------------------------------------------------------------------------

    def ls(self, args: list[str]) -> bool:
        ok = True
        files: list[str] = []
        directories: list[tuple[str, list[str]]] = []
        for target in [a for a in args if a] or ["."]:
            matches = self._resolve(target)
            if not matches:
                self._error(f"ls: {target}: no such file or directory.")
                ok = False
            for m in matches:
                if isinstance(m.node, mt.Directory):
                    directories.append((m.name, m.node.child_names()))
                else:
                    files.append(m.name)
        if self.as_json:
            if files:
                self._json(files)
            for _, children in directories:
                self._json(children)
            return ok
        # Kafka's LsCommandHandler.printTargets.
        self._print_entries("", files)
        need_intro = bool(files) or len(directories) > 1
        first_intro = not files
        for name, children in directories:
            intro = ""
            if need_intro:
                if not first_intro:
                    intro += "\n"
                intro += name + ":"
                first_intro = False
            self._print_entries(intro, children)
        return ok

    def _print_entries(self, intro: str, entries: list[str]) -> None:
        if not entries:
            return
        if intro:
            self._print(intro)
        columns, per_column, widths = _column_schema(self.screen_width, entries)
        lines = (len(entries) + columns - 1) // columns
        for line in range(lines):
            row = []
            for column in range(columns):
                index = line + column * per_column
                if index < len(entries):
                    entry = entries[index]
                    row.append(entry if column == columns - 1 else entry.ljust(widths[column]))
            self._print("".join(row))

    def cat(self, args: list[str]) -> bool:
        if not args:
            self._error("cat: at least one path is required (usage: cat TARGET...)")
            return False
        ok = True
        for target in args:
            matches = self._resolve(target)
            if not matches:
                self._error(f"cat: {target}: No such file or directory.")
                ok = False
            for m in matches:
                if isinstance(m.node, mt.Directory):
                    self._error(f"cat: {target}: Is a directory")
                    ok = False
                elif self.as_json:
                    self._json({"path": m.path, "value": m.node.value})
                else:
                    self._print(m.node.text)
        return ok

    def tree(self, args: list[str]) -> bool:
        ok = True
        for target in args or ["."]:
            matches = self._resolve(target)
            if not matches:
                self._error(f"tree: {target}: No such file or directory.")
                ok = False
            for m in matches:
                if self.as_json:
                    self._json({"path": m.path, "tree": mt.node_to_json(m.node)})
                else:
                    for line in mt.tree_lines(m.node):
                        self._print(line)
        return ok

    def find(self, args: list[str]) -> bool:
        ok = True
        for path in [a for a in args if a] or ["."]:
            matches = self._resolve(path)
            if not matches:
                self._error(f"find: {path}: no such file or directory.")
                ok = False
            for m in matches:
                # Kafka prints the paths as given (relative stays relative).
                lines = list(mt.find_lines(path, m.node))
                if self.as_json:
                    self._json(lines)
                else:
                    for line in lines:
                        self._print(line)
        return ok

    def pwd(self, args: list[str]) -> bool:
        if args:
            self._error("pwd: takes no arguments")
            return False
        if self.as_json:
            self._json(self.cwd)
        else:
            self._print(self.cwd)
        return True

    def cd(self, args: list[str]) -> bool:
        if len(args) > 1:
            self._error("cd: too many arguments (usage: cd [TARGET])")
            return False
        target = args[0] if args else "/"
        matches = self._resolve(target)
        if not matches:
            self._error(f"cd: {target}: no such directory.")
            return False
        m = matches[0]
        if not isinstance(m.node, mt.Directory):
            self._error(f"cd: {target}: not a directory.")
            return False
        self.cwd = m.path
        return True

    def help(self, args: list[str]) -> bool:
        self._print("Welcome to the kraft metadata shell (Kafka's kafka-metadata-shell).")
        self._print()
        width = max(len(c.usage) for c in COMMANDS.values())
        for name in sorted(COMMANDS):
            c = COMMANDS[name]
            self._print(f"  {c.usage.ljust(width)}  {c.description}")
        self._print()
        self._print("Paths: /image/{provenance,features,cluster,topics,configs,producerIds}, /local.")
        self._print("Globs (*, ?, {a,b}) match names in one path component.")
        return True

    def man(self, args: list[str]) -> bool:
        if len(args) != 1:
            self._error("man: usage: man COMMAND")
            return False
        command = COMMANDS.get(args[0])
        if command is None:
            self._error(f"man: unknown command '{args[0]}'")
            return False
        self._print(f"usage: {command.usage}")
        self._print()
        self._print(command.description)
        return True

    def show_history(self, args: list[str]) -> bool:
        if not self.interactive:
            self._error("history: the history command requires a shell.")
            return False
        count = len(self.history)
        if args:
            try:
                count = int(args[0])
            except ValueError:
                self._error(f"history: '{args[0]}' is not a number")
                return False
        first = max(0, len(self.history) - max(0, count))
        for i in range(first, len(self.history)):
            self._print(f"{i + 1:5d}  {self.history[i]}")
        return True

    def exit(self, args: list[str]) -> bool:
        raise _Exit()


def _column_schema(screen_width: int | None, entries: list[str]) -> tuple[int, int, list[int]]:
    """Kafka's LsCommandHandler.calculateColumnSchema: (columns, entries per column, widths)."""
    if screen_width is None or screen_width // 4 <= 1:
        return 1, len(entries), [0]
    max_columns = screen_width // 4
    schemas: list[tuple[int, int, list[int]]] = []
    for columns in range(1, max_columns + 1):
        per_column = (len(entries) + columns - 1) // columns
        widths = [0] * columns
        for i, entry in enumerate(entries):
            c = i // per_column
            widths[c] = max(widths[c], len(entry) + 2)
        schemas.append((columns, per_column, widths))
    for columns, per_column, widths in reversed(schemas[1:]):
        if widths[-1] != 0 and sum(widths) <= screen_width:
            return columns, per_column, widths
    return schemas[0]


COMMANDS: dict[str, _Command] = {
    "cat": _Command("cat TARGET...", "Show the contents of metadata files.", Shell.cat),
    "cd": _Command("cd [TARGET]", "Set the current working directory.", Shell.cd),
    "exit": _Command("exit", "Exit the metadata shell.", Shell.exit),
    "find": _Command("find [PATH...]", "Search for nodes in the directory hierarchy.", Shell.find),
    "help": _Command("help", "Display this help message.", Shell.help),
    "history": _Command("history [N]", "Print command history.", Shell.show_history),
    "ls": _Command("ls [TARGET...]", "List metadata nodes.", Shell.ls),
    "man": _Command("man COMMAND", "Show the help text for a specific command.", Shell.man),
    "pwd": _Command("pwd", "Print the current working directory.", Shell.pwd),
    "tree": _Command(
        "tree [TARGET...]", "Show the contents of metadata nodes in a tree structure.", Shell.tree
    ),
}


# ---------------------------------------------------------------------------------------------------
# main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Browse a metadata image offline, as Kafka's kafka-metadata-shell does.",
        epilog=(
            "--log-dir builds the image as a controller does at start: the latest snapshot, then "
            "every batch in the log after it. Offline the high watermark is unknown, so batches the "
            "quorum had not committed yet are replayed too. Without COMMAND the shell reads commands "
            "from stdin (a '>> ' prompt on a terminal). Commands: "
            + ", ".join(sorted(COMMANDS))
            + "; e.g. 'ls /image/topics/byName', 'cat /image/cluster/brokers/1'."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--snapshot", "-s", metavar="FILE", help="the snapshot file to read (or a .log segment)"
    )
    source.add_argument(
        "--log-dir",
        metavar="DIR",
        help=f"a metadata log directory (metadata.log.dir or its {METADATA_PARTITION_DIR_NAME})",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (one value per line) instead of text")
    parser.add_argument("command", nargs="*", metavar="COMMAND", help="a command to run, then exit")
    return parser


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return callable(isatty) and bool(isatty())


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    out, err = streams(out, err)
    inp = stdin if stdin is not None else sys.stdin
    # Intermixed: options may follow the command words (``ls --json /image``).
    ns = parse_args(build_parser(), argv, intermixed=True)
    if isinstance(ns, int):
        return ns
    try:
        loaded = load_snapshot_file(ns.snapshot) if ns.snapshot else load_log_dir(ns.log_dir)
    except LoadError as e:
        print(f"{PROG}: {e}", file=err)
        return 1
    for note in loaded.notes:
        print(f"{PROG}: note: {note}", file=err)
    root = mt.root_node(loaded.image, version=__version__)
    if ns.command:
        shell = Shell(root, out, err, as_json=ns.json)
        try:
            return 0 if shell.run(ns.command) else 1
        except _Exit:
            return 0
    return _interactive(root, loaded, ns.json, inp, out, err)


def _interactive(
    root: mt.Directory, loaded: LoadedImage, as_json: bool, inp: TextIO, out: TextIO, err: TextIO
) -> int:
    terminal = inp is sys.stdin and _is_tty(inp) and out is sys.stdout
    width = shutil.get_terminal_size().columns if terminal else None
    shell = Shell(root, out, err, as_json=as_json, screen_width=width, interactive=True)
    failed = False
    if terminal:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and arrow-key history for input())
        provenance = loaded.image.provenance
        print(f"Loaded {loaded.description} (image at offset {provenance.last_offset}).", file=out)
        print("[ kraft metadata shell ]  (type 'help' for the commands, 'exit' or Ctrl-D to leave)", file=out)
    while True:
        try:
            if terminal:
                line = input(">> ")
            else:
                line = inp.readline()
                if not line:
                    break
        except EOFError:
            if terminal:
                print(file=out)
            break
        except KeyboardInterrupt:
            print("^C", file=out)
            continue
        try:
            if not shell.run_line(line):
                failed = True
        except _Exit:
            break
        out.flush()
    # A script piped in fails like a one-shot command; a person at a terminal saw the errors.
    return 1 if failed and not terminal else 0


if __name__ == "__main__":
    sys.exit(main())
