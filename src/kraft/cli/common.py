"""Pieces every command-line tool's ``main`` and ``build_parser`` would otherwise write again.

Imports nothing beyond the standard library at import time, so that quick tools (``dump-log``,
``analyze --help``) stay quick; ``client_from_args`` imports ``kraft.client`` when called.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kraft.client.admin import AdminClient
    from kraft.client.broker_admin import BrokerAdminClient
    from kraft.client.connection import Address
    from kraft.client.security import ClientSecurityConfig

DEFAULT_TIMEOUT_MS = 30_000


class UsageError(Exception):
    """The arguments do not make one valid command; ``run_tool`` prints ``PROG: message``, exit 2."""


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


def run_tool(
    prog: str,
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    out: TextIO | None,
    err: TextIO | None,
    run: Callable[[argparse.Namespace, TextIO, TextIO], int],
) -> int:
    """A tool's ``main``: parses ``argv`` with ``parser`` and returns ``run(ns, out, err)``.

    The exit status argparse asked for (0 after --help, 2 on an error) comes back without running;
    a ``UsageError`` from ``run`` is reported as ``PROG: message`` on ``err`` with exit status 2.
    """
    out, err = streams(out, err)
    ns = parse_args(parser, argv)
    if isinstance(ns, int):
        return ns
    try:
        return run(ns, out, err)
    except UsageError as e:
        return report_misuse(prog, e, err)


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


def check_timeouts(ns: argparse.Namespace) -> None:
    """Raises ``UsageError`` unless ``--timeout-ms`` and ``--request-timeout-ms`` are positive."""
    if ns.timeout_ms <= 0 or ns.request_timeout_ms <= 0:
        raise UsageError("--timeout-ms and --request-timeout-ms must be positive")


def add_bootstrap_options(parser: argparse.ArgumentParser, *, server_help: str) -> None:
    """Adds the required choice of ``--bootstrap-server`` (``server_help``) or ``--bootstrap-controller``."""
    connection = parser.add_mutually_exclusive_group(required=True)
    connection.add_argument("--bootstrap-server", metavar="HOST:PORT", help=server_help)
    connection.add_argument(
        "--bootstrap-controller",
        metavar="HOST:PORT",
        help="comma-separated host:port pairs of controllers to connect to",
    )


COMMAND_CONFIG_HELP = (
    "Property file with Kafka's client settings for a secured listener: security.protocol, "
    "sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), sasl.jaas.config, ssl.truststore.location "
    "(ssl.truststore.type=PEM), ssl.keystore.location for a client certificate."
)


def add_command_config_option(parser: argparse.ArgumentParser) -> None:
    """Kafka's ``--command-config`` (client properties), unless the tool defines its own."""
    if not any("--command-config" in a.option_strings for a in parser._actions):
        parser.add_argument("--command-config", metavar="FILE", help=COMMAND_CONFIG_HELP)


def security_from_args(ns: argparse.Namespace) -> ClientSecurityConfig | None:
    """The TLS and SASL settings of ``--command-config`` (None without it: PLAINTEXT).

    Raises:
        UsageError: the file cannot be read or its settings are wrong (the property is named).
    """
    from kraft.client.security import client_security
    from kraft.common.config import load_properties
    from kraft.common.errors import ConfigError

    path = getattr(ns, "command_config", None)
    if path is None:
        return None
    try:
        return client_security(load_properties(path))
    except (ConfigError, OSError) as e:
        raise UsageError(f"--command-config {path}: {e}") from None


def admin_client_from_args(ns: argparse.Namespace) -> AdminClient:
    """The client ``add_bootstrap_options`` and ``add_timeout_options`` ask for: to the controllers
    with ``--bootstrap-controller``, else through the brokers of ``--bootstrap-server``."""
    from kraft.client.admin import AdminClient
    from kraft.client.connection import parse_bootstrap

    controller = ns.bootstrap_controller is not None
    bootstrap = parse_bootstrap(ns.bootstrap_controller if controller else ns.bootstrap_server)
    return AdminClient(
        bootstrap,
        security=security_from_args(ns),
        timeout_ms=ns.timeout_ms,
        request_timeout_ms=ns.request_timeout_ms,
        controller_endpoints=controller,
    )


# How a broker tool's ``main`` builds its client (tests pass a fake).
ClientFactory = Callable[[argparse.Namespace], "BrokerAdminClient"]


def client_from_args(ns: argparse.Namespace) -> BrokerAdminClient:
    """The client a tool's ``--bootstrap-server``, ``--timeout-ms`` and ``--request-timeout-ms`` ask for."""
    from kraft.client.broker_admin import BrokerAdminClient
    from kraft.client.connection import parse_bootstrap

    return BrokerAdminClient(
        parse_bootstrap(ns.bootstrap_server),
        security=security_from_args(ns),
        timeout_ms=ns.timeout_ms,
        request_timeout_ms=ns.request_timeout_ms,
    )


# What a broker tool's ``connect()`` returns: its client, opened (a malformed --bootstrap-server is misuse).
Connect = Callable[[], "BrokerAdminClient"]
# What a broker tool writes itself: ``main(ns, args, connect, out, err)`` -> exit status.
BrokerToolBody = Callable[[argparse.Namespace, list[str], Connect, TextIO, TextIO], int]


@dataclass(frozen=True)
class BrokerTool:
    """The ``main`` of a tool that talks to the brokers through one ``BrokerAdminClient``; made by
    ``@broker_tool(PROG, build_parser)`` over the tool's ``main(ns, args, connect, out, err) -> int``.

    Called as ``main(argv, out, err=..., client_factory=...)``, it runs the tool's function under
    ``run_tool`` with ``args`` the command line as a list (``argv``, else the process's) and
    ``connect()`` the client ``client_factory`` opens, a malformed ``--bootstrap-server`` being a
    ``UsageError``; the tool checks its arguments before it connects.
    """

    prog: str
    build_parser: Callable[[], argparse.ArgumentParser]
    execute: BrokerToolBody

    def __call__(
        self,
        argv: Sequence[str] | None = None,
        out: TextIO | None = None,
        *,
        err: TextIO | None = None,
        client_factory: ClientFactory = client_from_args,
    ) -> int:
        from kraft.client.connection import AdminError

        args = list(sys.argv[1:] if argv is None else argv)

        def run(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
            def connect() -> BrokerAdminClient:
                try:
                    return client_factory(ns)
                except AdminError as e:
                    raise UsageError(one_line(e)) from e

            return self.execute(ns, args, connect, out, err)

        parser = self.build_parser()
        add_command_config_option(parser)
        return run_tool(self.prog, parser, args, out, err, run)


def broker_tool(
    prog: str, build_parser: Callable[[], argparse.ArgumentParser]
) -> Callable[[BrokerToolBody], BrokerTool]:
    """``@broker_tool(PROG, build_parser)``: the decorated function becomes a ``BrokerTool``."""
    return lambda execute: BrokerTool(prog, build_parser, execute)


def bootstrap_arg(text: str) -> list[Address]:
    """The addresses of ``--bootstrap-server`` (or ``bootstrap.servers``); a malformed list is
    misuse (``UsageError``), found before connecting."""
    from kraft.client.connection import AdminError, parse_bootstrap

    try:
        return parse_bootstrap(text)
    except AdminError as e:
        raise UsageError(one_line(e)) from None


def one_line(error: Exception) -> str:
    """An error's message on one line (AdminError lists each address tried on its own line)."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
