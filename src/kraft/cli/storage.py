"""``kraft storage``: Kafka's ``kafka-storage`` tool (random-uuid, format, info).

* ``random-uuid`` prints a new cluster id (22-character base64url UUID).
* ``format --config FILE --cluster-id ID [--ignore-formatted] [--release-version V] [--feature
  NAME=LEVEL]...`` writes ``bootstrap.checkpoint`` (the metadata.version and other feature levels a
  new cluster starts with: ``kraft.metadata.bootstrap``) and then ``meta.properties`` (with a fresh
  ``directory.id``) into every directory of ``log.dirs``/``log.dir`` and ``metadata.log.dir``, as
  Kafka's ``Formatter`` does; the controller reads the one in ``metadata.log.dir``. It refuses
  unknown features, levels out of range and broken dependencies, a directory already formatted
  (unless ``--ignore-formatted``), and always one formatted for another cluster or node. Nothing is
  written unless every check passes. ``--add-scram`` (``-S``, repeatable, metadata.version 3.5-IV2
  or later) adds a UserScramCredentialRecord per argument to the bootstrap metadata, as Kafka's
  StorageTool (``kraft.security.scram_arguments``): the first admin can log in before any broker
  runs. The password itself is written nowhere.
* KIP-853 dynamic quorums, with Kafka 4.x's mutually exclusive flags: ``--standalone`` (``-s``) makes
  this controller the only initial voter (its id, a fresh directory id, the advertised endpoint of
  its first controller listener); ``--initial-controllers`` (``-I``) ``ID@HOST:PORT:DIRID,...`` names
  every initial voter, and this node's entry gives its metadata directory's ``directory.id``; both
  write the bootstrap checkpoint ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint``
  (kraft.version 1 and the VotersRecord) into the metadata log directory.
  ``--no-initial-controllers`` (``-N``) writes no voters: the controller joins as an observer and is
  added later (``kraft metadata-quorum add-controller``). The three imply ``kraft.version=1`` and
  need ``controller.quorum.bootstrap.servers`` instead of ``controller.quorum.voters``; a controller
  without ``controller.quorum.voters`` must use one of them. ``-s``/``-I`` are for controllers only.
* ``info --config FILE [--json]`` prints what Kafka prints: the directories found, the metadata of
  the first formatted one, and any problems (exit status 1 if there are problems); and, unlike
  Kafka, the bootstrap metadata of ``metadata.log.dir`` if it has a ``bootstrap.checkpoint`` and its
  initial controllers if it has a KIP-853 bootstrap checkpoint.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import secrets
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kraft.cli.common import streams
from kraft.common.config import get_int, get_list, get_str, load_properties
from kraft.common.errors import ConfigError, KraftError, StorageError
from kraft.common.uuids import ZERO_UUID, random_uuid, uuid_from_base64, uuid_to_base64
from kraft.metadata.bootstrap import (
    FEATURE_RANGES,
    KRAFT_VERSION,
    METADATA_VERSION,
    BootstrapMetadata,
    effective_features,
    parse_feature_flag,
)
from kraft.metadata.records import LATEST_METADATA_VERSION, MetadataVersion, parse_release_version
from kraft.raft.types import Endpoint, ReplicaKey
from kraft.raft.voters import KRAFT_VERSION_0, KRAFT_VERSION_1, VoterNode, VoterSet
from kraft.security.scram_arguments import ScramArgumentError, parse_scram_argument
from kraft.server.config import parse_listeners
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
from kraft.storage.snapshots import bootstrap_voters_path, read_bootstrap_voters, write_bootstrap_voters

VOTERS_PROP = "controller.quorum.voters"
BOOTSTRAP_SERVERS_PROP = "controller.quorum.bootstrap.servers"
_DYNAMIC_FLAGS = "--standalone, --initial-controllers, or --no-initial-controllers"


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
    fmt.add_argument(
        "--add-scram",
        "-S",
        action="append",
        default=[],
        metavar="SCRAM_CREDENTIAL",
        help="A SCRAM_CREDENTIAL to add to the __cluster_metadata log e.g. "
        "'SCRAM-SHA-256=[name=alice,password=alice-secret]' "
        '\'SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]\'; repeatable.',
    )
    quorum = fmt.add_mutually_exclusive_group()
    quorum.add_argument(
        "--standalone",
        "-s",
        action="store_true",
        help="Used to initialize a controller as a single-node dynamic quorum. When setting this flag, "
        f"the {VOTERS_PROP} config must not be set, and {BOOTSTRAP_SERVERS_PROP} is set instead.",
    )
    quorum.add_argument(
        "--no-initial-controllers",
        "-N",
        action="store_true",
        help="Used to initialize a server without specifying a dynamic quorum: a controller starts as "
        "an observer until `kraft metadata-quorum add-controller` adds it. When setting this flag, "
        f"the {VOTERS_PROP} config should not be set, and {BOOTSTRAP_SERVERS_PROP} is set instead.",
    )
    quorum.add_argument(
        "--initial-controllers",
        "-I",
        metavar="ID@HOST:PORT:DIRID,...",
        default=None,
        help="Used to initialize a server with the specified dynamic quorum. The argument is a "
        "comma-separated list of id@hostname:port:directory. The same values must be used to format "
        "all nodes. For example: 0@example.com:8082:JEXY6aqzQY-32P5TStzaFg,1@example.com:8083:"
        "MvDxzVmcRsaTz33bUuRU6A,2@example.com:8084:07R5amHmR32VDA6jHkGbTA. When setting this flag, "
        f"the {VOTERS_PROP} config must not be set, and {BOOTSTRAP_SERVERS_PROP} is set instead.",
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
    initial_voters = _initial_voters(args, props, node_id)
    dynamic = initial_voters is not None or args.no_initial_controllers
    bootstrap, kraft_version = _bootstrap_from_args(args, dynamic=dynamic)
    if args.add_scram:
        bootstrap = _with_scram(bootstrap, args.add_scram)
    directories = config_log_dirs(props)
    if not directories:
        raise ConfigError("no log directories: set log.dirs or metadata.log.dir")
    metadata_dir = metadata_log_dir(props)
    # KIP-853: the metadata directory of an initial voter carries the voter's directory id.
    voter_directory_id = None
    if initial_voters is not None:
        local = initial_voters.node(node_id)
        assert local is not None  # _initial_voters checked it
        voter_directory_id = local.key.directory_id

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
    write_voters = initial_voters is not None and metadata_dir in empty
    if write_voters:
        assert metadata_dir is not None and voter_directory_id is not None
        if uuid_to_base64(voter_directory_id) in used_ids:
            raise StorageError(
                f"directory id {uuid_to_base64(voter_directory_id)} of node {node_id} in "
                "--initial-controllers is already used by another log directory of this node"
            )
        used_ids.add(uuid_to_base64(voter_directory_id))
        leftover = bootstrap_voters_path(metadata_dir)
        if leftover.exists():
            raise StorageError(
                f"{leftover} already exists, but {metadata_dir} is not formatted; remove the "
                f"directory {leftover.parent} (a metadata log from an earlier cluster) and try again"
            )
    for directory in empty:
        if write_voters and directory == metadata_dir:
            assert voter_directory_id is not None
            directory_id = voter_directory_id
            kind = "dynamic metadata voter directory"
        else:
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
        # As Kafka's Formatter: the bootstrap files first, so a directory with meta.properties
        # always has them (a crash in between leaves an unformatted directory to format again).
        write_bootstrap_checkpoint(directory, bootstrap)
        if write_voters and directory == metadata_dir:
            assert initial_voters is not None
            write_bootstrap_voters(directory, initial_voters, kraft_version=kraft_version)
        write_meta_properties(
            directory, MetaProperties(cluster_id=args.cluster_id, node_id=node_id, directory_id=directory_id)
        )
    return 0


def parse_initial_controllers(text: str, listener_name: str) -> VoterSet:
    """``--initial-controllers``: ``ID@HOST:PORT:DIRID,...`` as Kafka's ``DynamicVoters.parse``
    reads it (an IPv6 host in brackets; DIRID a base64 UUID), each endpoint on ``listener_name``.

    Raises:
        ConfigError: the first malformed entry, a repeated node id or directory id, or no entry.
    """
    nodes: list[VoterNode] = []
    seen_dirs: set[uuid.UUID] = set()
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        node = _parse_initial_controller(item, listener_name)
        if any(n.key.id == node.key.id for n in nodes):
            raise ConfigError(f"--initial-controllers: node id {node.key.id} was specified more than once")
        if node.key.directory_id in seen_dirs:
            raise ConfigError(
                f"--initial-controllers: directory id {uuid_to_base64(node.key.directory_id)} was "
                "specified more than once"
            )
        seen_dirs.add(node.key.directory_id)
        nodes.append(node)
    if not nodes:
        raise ConfigError("--initial-controllers: no voters given")
    return VoterSet(nodes)


def _parse_initial_controller(item: str, listener_name: str) -> VoterNode:
    def bad(why: str) -> ConfigError:
        return ConfigError(f"--initial-controllers: {item!r} is not ID@HOST:PORT:DIRID: {why}")

    id_text, at, rest = item.partition("@")
    if not at:
        raise bad("no '@' found")
    try:
        node_id = int(id_text)
    except ValueError:
        raise bad(f"the node id {id_text!r} is not a number") from None
    if node_id < 0:
        raise bad(f"the node id {node_id} is negative")
    if rest.startswith("["):
        host, bracket, rest = rest[1:].partition("]")
        if not bracket:
            raise bad("the host begins with '[' but has no ']'")
    else:
        host, colon, tail = rest.partition(":")
        rest = colon + tail
    if not host:
        raise bad("no host found after the node id")
    if not rest.startswith(":"):
        raise bad("no ':' after the host")
    port_text, colon, dir_text = rest[1:].partition(":")
    if not colon:
        raise bad("no ':' after the port")
    try:
        port = int(port_text)
    except ValueError:
        raise bad(f"the port {port_text!r} is not a number") from None
    if not 0 < port <= 65535:
        raise bad(f"the port {port} is out of range")
    try:
        directory_id = uuid_from_base64(dir_text)
    except ValueError as e:
        raise bad(f"the directory id is not a base64 UUID ({e})") from None
    if directory_id == ZERO_UUID:
        raise bad("the directory id must not be the zero UUID")
    return VoterNode(ReplicaKey(node_id, directory_id), (Endpoint(listener_name, host, port),))


def _controller_endpoint(props: dict[str, str]) -> Endpoint:
    """The advertised endpoint of the first controller listener (Kafka's
    ``effectiveAdvertisedControllerListeners.head``): from advertised.listeners if named there,
    else from listeners; no host means localhost, as in Kafka, and so (unlike Kafka, which would
    write it into the voter set where no peer can use it) does a wildcard 0.0.0.0 or ::."""
    names = [n.upper() for n in get_list(props, "controller.listener.names")]
    if not names:
        raise ConfigError("controller.listener.names is required (e.g. CONTROLLER)")
    name = names[0]
    for prop in ("advertised.listeners", "listeners"):
        for e in parse_listeners(prop, get_list(props, prop)):
            if e.name == name:
                if e.port == 0:
                    raise ConfigError(
                        f"{prop}: the controller listener {name} needs a fixed port (not 0) to be "
                        "written into the initial voter set"
                    )
                host = e.host if e.host and e.host not in ("0.0.0.0", "::") else "localhost"
                return Endpoint(name, host, e.port)
    raise ConfigError(f"listeners: no listener named {name} (the first of controller.listener.names)")


def _initial_voters(args: argparse.Namespace, props: dict[str, str], node_id: int) -> VoterSet | None:
    """The KIP-853 rules of Kafka's StorageTool; the initial voter set for ``--standalone`` and
    ``--initial-controllers``, None otherwise.

    Raises:
        ConfigError: a flag the configuration does not allow, or a controller that needs one.
    """
    is_controller = "controller" in [r.lower() for r in get_list(props, "process.roles")]
    static_voters = get_list(props, VOTERS_PROP)
    if args.standalone and not is_controller:
        raise ConfigError("You can only use --standalone on a controller.")
    if args.initial_controllers is not None and not is_controller:
        raise ConfigError("You can only use --initial-controllers on a controller.")
    flag = (
        "--standalone"
        if args.standalone
        else "--initial-controllers"
        if args.initial_controllers is not None
        else "--no-initial-controllers"
        if args.no_initial_controllers
        else None
    )
    if flag is not None and static_voters:
        raise ConfigError(
            f"You cannot specify {VOTERS_PROP} and format the node with {flag}. If you want to use "
            f"dynamic quorum, please remove {VOTERS_PROP} and specify {BOOTSTRAP_SERVERS_PROP} instead."
        )
    if flag is None:
        if is_controller and not static_voters:
            raise ConfigError(
                f"Because {VOTERS_PROP} is not set on this controller, you must specify one of the "
                f"following: {_DYNAMIC_FLAGS}."
            )
        return None
    if is_controller and not get_list(props, BOOTSTRAP_SERVERS_PROP):
        raise ConfigError(
            f"{BOOTSTRAP_SERVERS_PROP} is required with {flag}: it is how this controller finds the "
            "quorum (e.g. host1:9093,host2:9093)"
        )
    if args.standalone:
        endpoint = _controller_endpoint(props)
        return VoterSet([VoterNode(ReplicaKey(node_id, random_uuid()), (endpoint,))])
    if args.initial_controllers is not None:
        names = get_list(props, "controller.listener.names")
        if not names:
            raise ConfigError("controller.listener.names is required (e.g. CONTROLLER)")
        voters = parse_initial_controllers(args.initial_controllers, names[0].upper())
        if node_id not in voters:
            raise ConfigError(
                f"--initial-controllers: node.id {node_id} is not one of the initial controllers "
                f"({', '.join(str(i) for i in sorted(voters.ids))}); its entry gives this node's "
                "directory id (use --no-initial-controllers to join later as an observer)"
            )
        return voters
    return None


def _mv_text(level: int) -> str:
    try:
        return MetadataVersion(level).release
    except ValueError:
        return str(level)


def _bootstrap_from_args(args: argparse.Namespace, *, dynamic: bool) -> tuple[BootstrapMetadata, int]:
    """--release-version and --feature, validated (``kraft.metadata.bootstrap``); with the
    kraft.version level, which the KIP-853 flags decide (Kafka's ``effectiveKRaftFeatureLevel``)."""
    try:
        release = None if args.release_version is None else parse_release_version(args.release_version)
        requested = [parse_feature_flag(text) for text in args.feature]
        features = effective_features(release, requested)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    given = dict(requested).get(KRAFT_VERSION)
    if given == KRAFT_VERSION_0 and dynamic:
        raise ConfigError(
            f"Cannot set {KRAFT_VERSION} to 0 if one of the flags {_DYNAMIC_FLAGS} is used. For "
            f"dynamic controllers support, try removing the --feature flag for {KRAFT_VERSION}."
        )
    if given is not None and given != KRAFT_VERSION_0 and not dynamic:
        raise ConfigError(
            f"Cannot set {KRAFT_VERSION} to {given} unless {VOTERS_PROP} is empty and one of the flags "
            f"{_DYNAMIC_FLAGS} is used. For dynamic controllers support, try using one of {_DYNAMIC_FLAGS} "
            f"and removing {VOTERS_PROP}."
        )
    features.pop(KRAFT_VERSION, None)
    return BootstrapMetadata(features), KRAFT_VERSION_1 if dynamic else KRAFT_VERSION_0


def _with_scram(bootstrap: BootstrapMetadata, arguments: Sequence[str]) -> BootstrapMetadata:
    """``--add-scram``: one UserScramCredentialRecord per argument, added to the bootstrap metadata
    (Kafka's Formatter); salts come from the OS's secure random source."""
    if bootstrap.metadata_version < MetadataVersion.IBP_3_5_IV2:
        raise ConfigError("SCRAM is only supported in metadata.version 3.5-IV2 or later.")
    try:
        records = [parse_scram_argument(a).to_record(secrets.token_bytes) for a in arguments]
    except ScramArgumentError as e:
        raise ConfigError(str(e)) from None
    return dataclasses.replace(bootstrap, scram_records=tuple(records))


def _bootstrap_report(bootstrap: BootstrapMetadata, directory: str) -> dict[str, Any]:
    return {
        "path": str(bootstrap_checkpoint_path(directory)),
        "metadata_version": bootstrap.metadata_version,
        "release_version": _mv_text(bootstrap.metadata_version),
        "features": dict(bootstrap.features),
    }


def _voters_text(voters: VoterSet) -> str:
    """A voter set in ``--initial-controllers`` form: ``ID@HOST:PORT:DIRID,...``."""
    items = []
    for v in voters:
        e = v.endpoints[0] if v.endpoints else Endpoint("", "", 0)
        host = f"[{e.host}]" if ":" in e.host else e.host
        items.append(f"{v.key.id}@{host}:{e.port}:{uuid_to_base64(v.key.directory_id)}")
    return ",".join(items)


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
    initial_voters: VoterSet | None = None
    metadata_dir = metadata_log_dir(props)
    if metadata_dir is not None and metadata_dir in found:
        try:
            bootstrap = read_bootstrap_checkpoint(metadata_dir)
        except StorageError as e:
            problems.append(str(e))
        try:
            bootstrap_voters = read_bootstrap_voters(metadata_dir)
        except StorageError as e:
            problems.append(str(e))
        else:
            initial_voters = None if bootstrap_voters is None else bootstrap_voters.voters

    if args.json:
        report = {
            "log_dirs": found,
            "metadata": None if first is None else first.to_properties(),
            "directories": per_dir,
            "bootstrap": None if bootstrap is None else _bootstrap_report(bootstrap, metadata_dir or ""),
            "initial_voters": None if initial_voters is None else _voters_text(initial_voters).split(","),
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
    if initial_voters is not None:
        print(f"Found initial controllers: {_voters_text(initial_voters)}", file=out)
        print("", file=out)
    if problems:
        print("Found problem:" if len(problems) == 1 else "Found problems:", file=out)
        for problem in problems:
            print(f"  {problem}", file=out)
        print("", file=out)
        return 1
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = streams(out, err)
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
