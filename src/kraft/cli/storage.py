"""``kraft storage``: Kafka's ``kafka-storage`` tool (random-uuid, format, info).

* ``random-uuid`` prints a new cluster id (22-character base64url UUID).
* ``format --config FILE --cluster-id ID [--ignore-formatted] [--release-version V] [--feature
  NAME=LEVEL]...`` writes ``bootstrap.checkpoint`` (the metadata.version and other feature levels a
  new cluster starts with: ``kraft.metadata.bootstrap``) and then ``meta.properties`` (with a fresh
  ``directory.id``) into every directory of ``log.dirs``/``log.dir`` and ``metadata.log.dir``, as
  Kafka's ``Formatter`` does; the controller reads the one in ``metadata.log.dir``. It refuses
  unknown features, levels out of range and broken dependencies, a directory already formatted
  (unless ``--ignore-formatted``), and always one formatted for another cluster or node. Nothing is
  written unless every check passes.
* ``info --config FILE [--json]`` prints what Kafka prints: the directories found, the metadata of
  the first formatted one, and any problems (exit status 1 if there are problems); and, unlike
  Kafka, the bootstrap metadata of ``metadata.log.dir`` if it has a ``bootstrap.checkpoint``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kraft.common.config import get_int, get_list, get_str, load_properties
from kraft.common.errors import ConfigError, KraftError, StorageError
from kraft.metadata.bootstrap import (
    FEATURE_RANGES,
    METADATA_VERSION,
    BootstrapMetadata,
    bootstrap_metadata,
    parse_feature_flag,
)
from kraft.metadata.records import LATEST_METADATA_VERSION, MetadataVersion, parse_release_version
from kraft.storage.bootstrap_file import (
    bootstrap_checkpoint_path,
    read_bootstrap_checkpoint,
    write_bootstrap_checkpoint,
)
from kraft.storage.meta_properties import (
    META_PROPERTIES_FILE,
    MetaProperties,
    read_meta_properties,
    write_meta_properties,
)
from kraft.storage.uuids import random_uuid, uuid_from_base64, uuid_to_base64


def _known_features() -> str:
    return ", ".join(
        f"{name} ({lo}..{hi})" if lo < hi else f"{name} ({lo})"
        for name, (lo, hi) in sorted(FEATURE_RANGES.items())
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kraft storage", description="Format and inspect KRaft log directories."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("random-uuid", help="Print a random UUID to use as a cluster id.")
    fmt = sub.add_parser("format", help="Format the log directories named by a server configuration.")
    fmt.add_argument("--config", "-c", required=True, help="The server properties file.")
    fmt.add_argument("--cluster-id", "-t", required=True, help="The cluster id (see random-uuid).")
    fmt.add_argument(
        "--ignore-formatted",
        "-g",
        action="store_true",
        help="Skip directories that are already formatted instead of failing.",
    )
    fmt.add_argument(
        "--release-version",
        "-r",
        default=None,
        metavar="VERSION",
        help="The metadata.version to bootstrap the cluster at: a release (4.0), one of its levels "
        f"(3.7-IV2) or a feature level (25). Default: the latest, {LATEST_METADATA_VERSION.release} "
        f"({int(LATEST_METADATA_VERSION)}).",
    )
    fmt.add_argument(
        "--feature",
        "-f",
        action="append",
        default=[],
        metavar="NAME=LEVEL",
        help="A feature level to bootstrap the cluster with; repeatable. "
        f"Known features: {_known_features()}. Default: eligible.leader.replicas.version=1 "
        "when metadata.version is 24 or later, all others 0.",
    )
    info = sub.add_parser("info", help="Describe the log directories named by a server configuration.")
    info.add_argument("--config", "-c", required=True, help="The server properties file.")
    info.add_argument("--json", action="store_true", help="Print a JSON object instead of text.")
    return parser


def config_log_dirs(props: dict[str, str]) -> list[str]:
    """``log.dirs`` (or ``log.dir``) plus ``metadata.log.dir``, sorted and without duplicates."""
    dirs = set(get_list(props, "log.dirs") or get_list(props, "log.dir"))
    metadata_dir = get_str(props, "metadata.log.dir")
    if metadata_dir is not None:
        dirs.add(metadata_dir)
    return sorted(dirs)


def metadata_log_dir(props: dict[str, str]) -> str | None:
    """Where the metadata partition lives: ``metadata.log.dir``, else the first of ``log.dirs``."""
    explicit = get_str(props, "metadata.log.dir")
    if explicit is not None:
        return explicit
    dirs = get_list(props, "log.dirs") or get_list(props, "log.dir")
    return dirs[0] if dirs else None


def _format(args: argparse.Namespace, out: TextIO) -> int:
    props = load_properties(args.config)
    if not get_list(props, "process.roles"):
        raise ConfigError("process.roles is required: the configuration is not for a KRaft node")
    node_id = get_int(props, "node.id", -1)
    if node_id < 0:
        raise ConfigError("node.id is required and must be a non-negative integer")
    try:
        uuid_from_base64(args.cluster_id)
    except ValueError as e:
        raise ConfigError(
            f"Cluster ID string {args.cluster_id} does not appear to be a valid UUID: {e}"
        ) from None
    bootstrap = _bootstrap_from_args(args)
    directories = config_log_dirs(props)
    if not directories:
        raise ConfigError("no log directories: set log.dirs or metadata.log.dir")
    metadata_dir = metadata_log_dir(props)

    # Check everything first; write nothing if any directory is unusable.
    formatted: list[str] = []
    empty: list[str] = []
    used_ids: set[str] = set()
    for directory in directories:
        path = Path(directory)
        if path.exists() and not path.is_dir():
            raise StorageError(f"{directory} is not a directory")
        meta = read_meta_properties(path, expected_cluster_id=args.cluster_id, expected_node_id=node_id)
        if meta is None:
            empty.append(directory)
        else:
            formatted.append(directory)
            if meta.directory_id is not None:
                used_ids.add(uuid_to_base64(meta.directory_id))
    if formatted and not args.ignore_formatted:
        raise StorageError(
            f"Log directory {formatted[0]} is already formatted. "
            "Use --ignore-formatted to ignore this directory and format the others."
        )
    if not empty:
        print("All of the log directories are already formatted.", file=out)
        return 0
    for directory in empty:
        directory_id = random_uuid()
        while uuid_to_base64(directory_id) in used_ids:
            directory_id = random_uuid()
        used_ids.add(uuid_to_base64(directory_id))
        kind = "metadata directory" if directory == metadata_dir else "data directory"
        print(
            f"Formatting {kind} {directory} with {METADATA_VERSION} {_mv_text(bootstrap.metadata_version)}.",
            file=out,
        )
        Path(directory).mkdir(parents=True, exist_ok=True)
        # As Kafka's Formatter: the bootstrap file first, so a directory with meta.properties
        # always has it (a crash in between leaves an unformatted directory to format again).
        write_bootstrap_checkpoint(directory, bootstrap)
        write_meta_properties(
            directory, MetaProperties(cluster_id=args.cluster_id, node_id=node_id, directory_id=directory_id)
        )
    return 0


def _mv_text(level: int) -> str:
    try:
        return MetadataVersion(level).release
    except ValueError:
        return str(level)


def _bootstrap_from_args(args: argparse.Namespace) -> BootstrapMetadata:
    """--release-version and --feature, validated (``kraft.metadata.bootstrap``)."""
    try:
        release = None if args.release_version is None else parse_release_version(args.release_version)
        requested = [parse_feature_flag(text) for text in args.feature]
        return bootstrap_metadata(release, requested)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _bootstrap_report(bootstrap: BootstrapMetadata, directory: str) -> dict[str, Any]:
    return {
        "path": str(bootstrap_checkpoint_path(directory)),
        "metadata_version": bootstrap.metadata_version,
        "release_version": _mv_text(bootstrap.metadata_version),
        "features": dict(bootstrap.features),
    }


def _info(args: argparse.Namespace, out: TextIO) -> int:
    props = load_properties(args.config)
    directories = config_log_dirs(props)
    problems: list[str] = []
    found: list[str] = []
    first: MetaProperties | None = None
    per_dir: list[dict[str, Any]] = []
    for directory in directories:
        path = Path(directory)
        if not path.is_dir():
            problems.append(
                f"{directory} does not exist" if not path.exists() else f"{directory} is not a directory"
            )
            continue
        found.append(directory)
        entry: dict[str, Any] = {"path": directory, "formatted": False}
        per_dir.append(entry)
        if not (path / META_PROPERTIES_FILE).exists():
            problems.append(f"{directory} is not formatted.")
            continue
        try:
            meta = read_meta_properties(path)
        except StorageError as e:
            problems.append(f"Error loading {path / META_PROPERTIES_FILE}: {e}")
            continue
        assert meta is not None
        entry.update(
            formatted=True,
            cluster_id=meta.cluster_id,
            node_id=meta.node_id,
            directory_id=None if meta.directory_id is None else uuid_to_base64(meta.directory_id),
        )
        if first is None:
            first = meta
        elif first.cluster_id != meta.cluster_id:
            problems.append("Mismatched cluster IDs between storage directories.")
        elif first.node_id != meta.node_id:
            problems.append("Mismatched node IDs between storage directories.")
    if first is not None and not get_list(props, "process.roles"):
        problems.append(
            "The kafka configuration file appears to be for a legacy cluster, but "
            "the directories are formatted for a cluster in KRaft mode."
        )
    bootstrap: BootstrapMetadata | None = None
    metadata_dir = metadata_log_dir(props)
    if metadata_dir is not None and metadata_dir in found:
        try:
            bootstrap = read_bootstrap_checkpoint(metadata_dir)
        except StorageError as e:
            problems.append(str(e))

    if args.json:
        report = {
            "log_dirs": found,
            "metadata": None if first is None else first.to_properties(),
            "directories": per_dir,
            "bootstrap": None if bootstrap is None else _bootstrap_report(bootstrap, metadata_dir or ""),
            "problems": problems,
        }
        print(json.dumps(report, indent=2), file=out)
        return 1 if problems else 0
    if not directories:
        print("No directories specified.", file=out)
        return 0
    if found:
        print("Found log directory:" if len(found) == 1 else "Found log directories:", file=out)
        for directory in found:
            print(f"  {directory}", file=out)
        print("", file=out)
    if first is not None:
        rendered = ", ".join(f"{k}={v}" for k, v in first.to_properties().items())
        print(f"Found metadata: {{{rendered}}}", file=out)
        print("", file=out)
    if bootstrap is not None:
        levels = [
            f"{name}={level} ({_mv_text(level)})" if name == METADATA_VERSION else f"{name}={level}"
            for name, level in bootstrap.features.items()
        ]
        print(f"Found bootstrap metadata: {{{', '.join(levels)}}}", file=out)
        print("", file=out)
    if problems:
        print("Found problem:" if len(problems) == 1 else "Found problems:", file=out)
        for problem in problems:
            print(f"  {problem}", file=out)
        print("", file=out)
        return 1
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "random-uuid":
            print(uuid_to_base64(random_uuid()), file=out)
            return 0
        if args.command == "format":
            return _format(args, out)
        return _info(args, out)
    except KraftError as e:
        print(f"kraft storage {args.command}: {e}", file=err)
        return 1
    except OSError as e:
        print(f"kraft storage {args.command}: {os.strerror(e.errno or 0)}: {e.filename}", file=err)
        return 1


if __name__ == "__main__":
    sys.exit(main())
