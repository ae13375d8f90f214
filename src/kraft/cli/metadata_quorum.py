"""``kraft metadata-quorum``: Kafka's ``kafka-metadata-quorum describe`` for our quorum.

    kraft metadata-quorum --bootstrap-controller HOST:PORT[,HOST:PORT...] describe --status
    kraft metadata-quorum --bootstrap-controller HOST:PORT describe --replication [--human-readable]
    kraft metadata-quorum --bootstrap-server HOST:PORT describe --status --json

The text layouts are Kafka's (spec raft.md section 9); ``--json`` prints one object holding what
both views show. DescribeQuorum goes to the leader, found from any bootstrap node (see
``kraft.tools.admin``); the cluster id comes from DescribeCluster (or Metadata). Exit status: 0 on
success, 1 when the quorum could not be described, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from kraft.tools.admin import AdminClient, AdminError, parse_bootstrap
from kraft.tools.quorum_info import (
    ClockDriftError,
    format_replication,
    format_status,
    to_json,
)

ClientFactory = Callable[[argparse.Namespace], AdminClient]


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kraft metadata-quorum", description="This tool describes kraft metadata quorum status."
    )
    connection = parser.add_mutually_exclusive_group(required=True)
    connection.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="comma-separated host:port pairs of nodes to connect to",
    )
    connection.add_argument(
        "--bootstrap-controller",
        metavar="HOST:PORT",
        help="comma-separated host:port pairs of controllers to connect to",
    )
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=30_000,
        help="give up when no leader has answered within this time (default: %(default)s)",
    )
    parser.add_argument(
        "--request-timeout-ms",
        type=int,
        default=5_000,
        help="deadline of each single request (default: %(default)s)",
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
    describe.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def _validate(ns: argparse.Namespace) -> None:
    # Messages as Kafka's tool words them.
    if ns.status and ns.replication:
        raise _UsageError(
            "Only one of --status or --replication should be specified with describe sub-command"
        )
    if not ns.status and not ns.replication:
        raise _UsageError("One of --status or --replication must be specified with describe sub-command")
    if ns.status and ns.human_readable:
        raise _UsageError("The option --human-readable is only supported along with --replication")
    if ns.timeout_ms <= 0 or ns.request_timeout_ms <= 0:
        raise _UsageError("--timeout-ms and --request-timeout-ms must be positive")


def default_client(ns: argparse.Namespace) -> AdminClient:
    controller = ns.bootstrap_controller is not None
    bootstrap = parse_bootstrap(ns.bootstrap_controller if controller else ns.bootstrap_server)
    return AdminClient(
        bootstrap,
        timeout_ms=ns.timeout_ms,
        request_timeout_ms=ns.request_timeout_ms,
        controller_endpoints=controller,
    )


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
    client_factory: ClientFactory = default_client,
    now_ms: Callable[[], int] = _wall_clock_ms,
) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits on --help and on errors
        return int(e.code) if isinstance(e.code, int) else 2
    try:
        _validate(ns)
        client = client_factory(ns)
        text = render(ns, client, now_ms)
    except _UsageError as e:
        print(str(e), file=err)
        return 2
    except (AdminError, ClockDriftError, ValueError) as e:
        print(f"kraft metadata-quorum: {e}", file=err)
        return 1
    print(text, file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
