"""``kraft server-start CONFIG [--override key=value ...]``: run one KRaft controller in the foreground.

Like Kafka's ``kafka-server-start.sh``: reads a properties file, logs to stderr (one line per event,
node id in each), and runs until SIGTERM or SIGINT, which trigger a graceful shutdown (a leader
resigns and sends EndQuorumEpoch) and exit code 0. A bad configuration or an unformatted log
directory prints one ``error: ...`` line naming the property and exits 1; a fatal error at run time
(failed storage, broken invariant) exits 1 as well. docs/configuration.md documents the properties.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TextIO

from kraft.common.errors import ConfigError, KraftError

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def configure_logging(level: str = "INFO", stream: TextIO | None = None) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format=LOG_FORMAT,
        stream=stream or sys.stderr,
        force=True,
    )


def parse_overrides(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--override {item!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kraft server-start", description="Run one KRaft controller node.")
    parser.add_argument("config", help="server.properties file (Kafka property names)")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a property from the file (repeatable)",
    )
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    parser.add_argument("--no-uvloop", action="store_true", help="use asyncio's default event loop")
    parser.add_argument(
        "--supervisor-lock",
        metavar="PATH",
        help="stop gracefully (as on SIGTERM) once no process holds a lock on PATH; a foreground "
        "`kraft cluster up` passes it so that its nodes end with it",
    )
    return parser


def main(argv: Sequence[str] | None = None, *, stderr: TextIO | None = None) -> int:
    err = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level, err)
    from kraft.server import gc_policy
    from kraft.server.config import load_server_config
    from kraft.server.kraft_server import run_server
    from kraft.server.process_limits import raise_open_file_limit

    try:
        config = load_server_config(args.config, parse_overrides(args.override))
        if args.supervisor_lock:
            from pathlib import Path

            from kraft.cli.supervisor_lock import stop_when_released

            # Controllers last: the brokers' controlled shutdown needs them.
            stop_when_released(Path(args.supervisor_lock), delay_s=0.0 if config.is_broker else 3.0)
        raise_open_file_limit()  # a descriptor per segment and per connection, as the JVM does for Kafka
        gc_policy.install()  # full collections walk only what is new (kraft.server.gc_policy)
        return run_server(config, use_uvloop=not args.no_uvloop)
    except ConfigError as e:
        print(f"error: {e}", file=err)
        return 1
    except KraftError as e:
        print(f"error: {type(e).__name__}: {e}", file=err)
        return 1
    except OSError as e:
        # e.g. a listener port already in use
        print(f"error: {e}", file=err)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
