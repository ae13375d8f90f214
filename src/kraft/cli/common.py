"""Pieces every command-line tool's ``main`` and ``build_parser`` would otherwise write again.

Imports nothing beyond the standard library at import time, so that quick tools (``dump-log``,
``analyze --help``) stay quick; ``client_from_args`` imports ``kraft.client`` when called.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kraft.client.broker_admin import BrokerAdminClient

DEFAULT_TIMEOUT_MS = 30_000


def streams(out: TextIO | None, err: TextIO | None) -> tuple[TextIO, TextIO]:
    """``(out, err)``, with the process's current stdout and stderr for the ones not given."""
    return (out if out is not None else sys.stdout, err if err is not None else sys.stderr)


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, *, intermixed: bool = False
) -> argparse.Namespace | int:
    """The parsed ``argv``, or the exit status argparse asked for (0 after --help, 2 on an error)."""
    try:
        return parser.parse_intermixed_args(argv) if intermixed else parser.parse_args(argv)
    except SystemExit as e:  # argparse exits on --help and on errors
        return int(e.code) if isinstance(e.code, int) else 2


def report_misuse(prog: str, message: object, err: TextIO) -> int:
    """Prints ``PROG: message`` to ``err`` and returns 2, the exit status of a misused tool."""
    print(f"{prog}: {message}", file=err)
    return 2


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Adds ``--json``: print one JSON object instead of text."""
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def add_timeout_options(
    parser: argparse.ArgumentParser,
    *,
    request_timeout_ms_default: int,
    timeout_help: str = "overall deadline of each admin call",
    request_timeout_help: str = "deadline of each request",
) -> None:
    """Adds ``--timeout-ms`` (default 30000) and ``--request-timeout-ms`` (the tool's own default)."""
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=DEFAULT_TIMEOUT_MS,
        help=f"{timeout_help} (default: %(default)s)",
    )
    parser.add_argument(
        "--request-timeout-ms",
        type=int,
        default=request_timeout_ms_default,
        help=f"{request_timeout_help} (default: %(default)s)",
    )


# How a broker tool's ``main`` builds its client (tests pass a fake).
ClientFactory = Callable[[argparse.Namespace], "BrokerAdminClient"]


def client_from_args(ns: argparse.Namespace) -> BrokerAdminClient:
    """The client a tool's ``--bootstrap-server``, ``--timeout-ms`` and ``--request-timeout-ms`` ask for."""
    from kraft.client.broker_admin import BrokerAdminClient
    from kraft.client.connection import parse_bootstrap

    return BrokerAdminClient(
        parse_bootstrap(ns.bootstrap_server),
        timeout_ms=ns.timeout_ms,
        request_timeout_ms=ns.request_timeout_ms,
    )


def one_line(error: Exception) -> str:
    """An error's message on one line (AdminError lists each address tried on its own line)."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
