"""``kraft metadata-quorum``: Kafka's ``kafka-metadata-quorum`` for our quorum.

    kraft metadata-quorum --bootstrap-controller HOST:PORT[,HOST:PORT...] describe --status
    kraft metadata-quorum --bootstrap-controller HOST:PORT describe --replication [--human-readable]
    kraft metadata-quorum --bootstrap-server HOST:PORT describe --status --json
    kraft metadata-quorum --bootstrap-controller HOST:PORT add-controller --config CONTROLLER.properties
    kraft metadata-quorum --bootstrap-server BROKER:PORT remove-controller \
        --controller-id ID --controller-directory-id DIRID

The text layouts are Kafka's (spec raft.md section 9); ``--json`` prints one object holding what
both views show. With ``--bootstrap-controller`` DescribeQuorum goes to the leader, found from any
bootstrap controller (see ``kraft.client.admin``); with ``--bootstrap-server`` every request goes to
a broker, which forwards DescribeQuorum, AddRaftVoter and RemoveRaftVoter to the active controller,
as Kafka 4.x brokers do. The cluster id comes from DescribeCluster (or Metadata).

``add-controller`` and ``remove-controller`` are KIP-853's (the quorum must run kraft.version 1, i.e.
be formatted with ``kraft storage format --standalone`` or ``--initial-controllers``).
``add-controller`` reads the new controller's server properties (``--config``, or Kafka's
``--command-config``): its ``node.id``, the ``directory.id`` in its metadata log directory's
``meta.properties`` (it must be formatted, typically with ``--no-initial-controllers``, and running
as an observer) and the advertised endpoints of its controller listeners; it sends AddRaftVoter to
the leader and prints Kafka's ``Added controller N with directory id D and endpoints: ...`` once
the new voter set is committed. ``remove-controller`` sends RemoveRaftVoter and prints Kafka's
``Removed  KRaft controller N with directory id D`` (two spaces, as Kafka prints it). A refusal
prints the error name and the leader's message. ``--dry-run`` prints what would be done.

Exit status: 0 on success, 1 when the quorum could not be described or changed, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from kraft.cli.common import (
    UsageError,
    add_bootstrap_options,
    add_json_option,
    add_timeout_options,
    admin_client_from_args,
    check_timeouts,
    parse_args,
    streams,
)
from kraft.client.admin import AdminClient
from kraft.client.connection import AdminError
from kraft.client.quorum_info import (
    ClockDriftError,
    format_replication,
    format_status,
    to_json,
)
from kraft.common.config import get_list, get_str, load_properties
from kraft.common.errors import ConfigError, StorageError
from kraft.common.uuids import uuid_from_base64, uuid_to_base64
from kraft.raft.types import Endpoint
from kraft.server.config import parse_listeners
from kraft.storage.meta_properties import read_meta_properties

ClientFactory = Callable[[argparse.Namespace], AdminClient]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kraft metadata-quorum", description="This tool describes kraft metadata quorum status."
    )
    add_bootstrap_options(
        parser,
        server_help="comma-separated host:port pairs of brokers to connect to; they forward DescribeQuorum, "
        "AddRaftVoter and RemoveRaftVoter to the active controller",
    )
    add_timeout_options(
        parser,
        request_timeout_ms_default=5_000,
        timeout_help="give up when the leader has not answered, directly or through a broker, within "
        "this time",
        request_timeout_help="deadline of each single request",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="For add-controller: the properties file of the controller being added "
        "(the same as add-controller --config).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    describe = sub.add_parser("describe", help="Describe the metadata quorum info")
    status = describe.add_argument_group("Status")
    status.add_argument("--status", action="store_true", help="a short summary of the quorum status")
    replication = describe.add_argument_group("Replication")
    replication.add_argument(
        "--replication", action="store_true", help="detailed information about the status of replication"
    )
    replication.add_argument("--human-readable", action="store_true", help="timestamps as 'N ms ago'")
    add_json_option(describe)
    add = sub.add_parser("add-controller", help="Add a controller to the KRaft controller cluster")
    add.add_argument(
        "--config",
        metavar="FILE",
        help="the server properties of the controller to add (node.id, metadata log dir, listeners)",
    )
    add.add_argument(
        "--dry-run", action="store_true", help="True if we should print what would be done, but not do it."
    )
    remove = sub.add_parser("remove-controller", help="Remove a controller from the KRaft controller cluster")
    remove.add_argument(
        "--controller-id", "-i", type=int, required=True, help="The id of the controller to remove."
    )
    remove.add_argument(
        "--controller-directory-id",
        "-d",
        required=True,
        help="The directory ID of the controller to remove.",
    )
    remove.add_argument(
        "--dry-run", action="store_true", help="True if we should print what would be done, but not do it."
    )
    return parser


def _validate(ns: argparse.Namespace) -> None:
    check_timeouts(ns)
    if ns.command != "describe":
        return
    # Messages as Kafka's tool words them.
    if ns.status and ns.replication:
        raise UsageError(
            "Only one of --status or --replication should be specified with describe sub-command"
        )
    if not ns.status and not ns.replication:
        raise UsageError("One of --status or --replication must be specified with describe sub-command")
    if ns.status and ns.human_readable:
        raise UsageError("The option --human-readable is only supported along with --replication")


class _TerseError(Exception):
    """Kafka's TerseException: printed as is, exit status 1."""


def controller_id_of(props: dict[str, str]) -> int:
    """Kafka's ``getControllerId``: node.id of a controller configuration."""
    text = get_str(props, "node.id")
    if text is None:
        raise _TerseError(
            "node.id not found in configuration file. Is this a valid controller configuration file?"
        )
    try:
        node_id = int(text)
    except ValueError:
        raise _TerseError(f"node.id {text!r} in configuration file is not a number.") from None
    if node_id < 0:
        raise _TerseError(
            "node.id was negative in configuration file. Is this a valid controller configuration file?"
        )
    if "controller" not in [r.lower() for r in get_list(props, "process.roles")]:
        raise _TerseError(
            "process.roles did not contain 'controller' in configuration file. "
            "Is this a valid controller configuration file?"
        )
    return node_id


def metadata_directory_of(props: dict[str, str]) -> str:
    """Kafka's ``getMetadataDirectory``: metadata.log.dir, else the first of log.dirs."""
    explicit = get_str(props, "metadata.log.dir")
    if explicit is not None:
        return explicit
    dirs = get_list(props, "log.dirs") or get_list(props, "log.dir")
    if dirs:
        return dirs[0]
    raise _TerseError(
        "Neither metadata.log.dir nor log.dirs were found. Is this a valid controller configuration file?"
    )


def metadata_directory_id(directory: str) -> uuid.UUID:
    """Kafka's ``getMetadataDirectoryId``: the directory.id in the directory's meta.properties."""
    try:
        meta = read_meta_properties(directory)
    except StorageError as e:
        raise _TerseError(f"Unable to read meta.properties from {directory}: {e}") from None
    if meta is None:
        raise _TerseError(
            f"Unable to read meta.properties from {directory} (format it first: kraft storage format "
            "--no-initial-controllers)"
        )
    if meta.directory_id is None:
        raise _TerseError(f"No directory id found in {directory}")
    return meta.directory_id


def controller_endpoints_of(props: dict[str, str]) -> list[Endpoint]:
    """Kafka's ``getControllerAdvertisedListeners``: for each name in controller.listener.names, its
    advertised.listeners entry, else its listeners entry (no host: localhost)."""
    try:
        known = {e.name: e for e in parse_listeners("listeners", get_list(props, "listeners"))}
        known.update(
            {
                e.name: e
                for e in parse_listeners("advertised.listeners", get_list(props, "advertised.listeners"))
            }
        )
    except ConfigError as e:
        raise _TerseError(str(e)) from None
    names = get_list(props, "controller.listener.names")
    if not names:
        raise _TerseError(
            "controller.listener.names was not found. Is this a valid controller configuration file?"
        )
    out: list[Endpoint] = []
    for raw in names:
        name = raw.strip().upper()
        endpoint = known.get(name)
        if endpoint is None:
            raise _TerseError(f"Cannot find information about controller listener name: {name}")
        result = Endpoint(name, endpoint.host or "localhost", endpoint.port)
        if result not in out:
            out.append(result)
    return out


def _endpoint_text(e: Endpoint) -> str:
    host = f"[{e.host}]" if ":" in e.host else e.host
    return f"{e.name}://{host}:{e.port}"


def add_controller(ns: argparse.Namespace, client_factory: ClientFactory) -> str:
    path = ns.config or ns.command_config
    if path is None:
        raise _TerseError(
            "You must supply the configuration file of the controller you are adding when using "
            "add-controller."
        )
    if not Path(path).exists():
        raise _TerseError(f"Properties file {path} does not exist.")
    props = load_properties(path)
    controller_id = controller_id_of(props)
    directory_id = metadata_directory_id(metadata_directory_of(props))
    endpoints = controller_endpoints_of(props)
    if not ns.dry_run:
        client_factory(ns).add_raft_voter(controller_id, directory_id, endpoints)
    return (
        f"{'DRY RUN of adding' if ns.dry_run else 'Added'} controller {controller_id} with directory id "
        f"{uuid_to_base64(directory_id)} and endpoints: {', '.join(_endpoint_text(e) for e in endpoints)}"
    )


def remove_controller(ns: argparse.Namespace, client_factory: ClientFactory) -> str:
    if ns.controller_id < 0:
        raise _TerseError(f"Invalid negative --controller-id: {ns.controller_id}")
    try:
        directory_id = uuid_from_base64(ns.controller_directory_id)
    except ValueError as e:
        raise _TerseError(f"Failed to parse --controller-directory-id: {e}") from None
    if not ns.dry_run:
        client_factory(ns).remove_raft_voter(ns.controller_id, directory_id)
    # Kafka's format string is "%s KRaft controller ..." with "Removed " or "DRY RUN of removing ":
    # two spaces, kept so that scripts matching Kafka's output match ours.
    prefix = "DRY RUN of removing " if ns.dry_run else "Removed "
    return f"{prefix} KRaft controller {ns.controller_id} with directory id {uuid_to_base64(directory_id)}"


def render(ns: argparse.Namespace, client: AdminClient, now_ms: Callable[[], int]) -> str:
    """Runs the describe command against ``client`` and returns the text to print."""
    if ns.json:
        info = client.describe_quorum()
        cluster_id = client.cluster_id()
        return json.dumps(to_json(cluster_id, info, now_ms()), indent=2)
    if ns.status:
        # Kafka asks for the cluster id first; a cluster that cannot say it is not healthy.
        cluster_id = client.cluster_id()
        return format_status(cluster_id, client.describe_quorum())
    info = client.describe_quorum()
    return format_replication(info, now_ms(), human_readable=ns.human_readable)


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    client_factory: ClientFactory = admin_client_from_args,
    now_ms: Callable[[], int] = _wall_clock_ms,
) -> int:
    out, err = streams(out, err)
    ns = parse_args(build_parser(), argv)
    if isinstance(ns, int):
        return ns
    try:
        _validate(ns)
        if ns.command == "add-controller":
            text = add_controller(ns, client_factory)
        elif ns.command == "remove-controller":
            text = remove_controller(ns, client_factory)
        else:
            text = render(ns, client_factory(ns), now_ms)
    except UsageError as e:  # Kafka's tool prints these without its name
        print(str(e), file=err)
        return 2
    except _TerseError as e:
        print(str(e), file=err)
        return 1
    except (AdminError, ConfigError, ClockDriftError, ValueError) as e:
        print(f"kraft metadata-quorum: {e}", file=err)
        return 1
    print(text, file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
