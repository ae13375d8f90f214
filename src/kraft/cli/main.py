"""``kraft``: the console script. Dispatches ``kraft TOOL ...`` to ``kraft.cli.<module>.main``.

Tools are imported lazily so that ``kraft --help`` and quick tools stay fast.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

# tool name -> (module, one-line help). Names mirror Kafka's tools.
TOOLS: dict[str, tuple[str, str]] = {
    "storage": ("kraft.cli.storage", "format and inspect log directories (random-uuid, format, info)"),
    "dump-log": ("kraft.cli.dump_log", "print the batches and records of log segments and snapshots"),
    "server-start": ("kraft.cli.server_start", "run one KRaft node from a properties file"),
    "test-raft-server": ("kraft.cli.test_raft_server", "run a node that appends at a set rate while leader"),
    "cluster": ("kraft.cli.cluster", "start or stop a local cluster of controller and broker processes"),
    "metadata-quorum": ("kraft.cli.metadata_quorum", "describe the quorum (--status, --replication)"),
    "metadata-shell": ("kraft.cli.metadata_shell", "browse the metadata image of a snapshot or a log dir"),
    "features": ("kraft.cli.features", "describe, upgrade, downgrade or disable feature levels"),
    "topics": ("kraft.cli.topics", "create, list, describe, alter or delete topics through a broker"),
    "configs": ("kraft.cli.configs", "describe or alter topic and broker configs through a broker"),
    "acls": ("kraft.cli.acls", "add, remove or list ACLs through a broker (kafka-acls.sh)"),
    "leader-election": ("kraft.cli.leader_election", "run preferred or unclean leader elections"),
    "broker-api-versions": ("kraft.cli.broker_api_versions", "list the API versions each broker serves"),
    "log-dirs": ("kraft.cli.log_dirs", "describe each broker's log directories (kafka-log-dirs.sh)"),
    "console-producer": ("kraft.cli.console_producer", "send lines from stdin to a topic as records"),
    "console-consumer": ("kraft.cli.console_consumer", "print a topic's records (no groups: by assignment)"),
    "get-offsets": ("kraft.cli.get_offsets", "print topic:partition:offset at a time (latest, earliest, ts)"),
    "producer-perf-test": (
        "kraft.cli.producer_perf_test",
        "produce fixed-size records, print throughput/latency",
    ),
    "consumer-perf-test": ("kraft.cli.consumer_perf_test", "read a topic from the start, print throughput"),
    "sim": ("kraft.cli.sim", "run the deterministic fault-injecting simulator"),
    "analyze": ("kraft.cli.analyze", "rebuild a cluster's history from its metadata logs on Spark (report)"),
}


def _usage() -> str:
    lines = ["usage: kraft TOOL [ARGS...]", "", "tools:"]
    width = max(len(n) for n in TOOLS)
    for name, (_, help_text) in TOOLS.items():
        lines.append(f"  {name.ljust(width)}  {help_text}")
    lines.append("")
    lines.append("Run 'kraft TOOL --help' for a tool's options.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from kraft import __version__

        print(f"kraft {__version__}")
        return 0
    tool = TOOLS.get(args[0])
    if tool is None:
        print(f"kraft: unknown tool '{args[0]}'\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(tool[0])
    except ModuleNotFoundError as e:
        if e.name == tool[0]:
            print(f"kraft: the '{args[0]}' tool is not available in this build", file=sys.stderr)
            return 2
        raise
    try:
        result: int = module.main(args[1:])
        sys.stdout.flush()  # inside the try: a closed pipe shows up here, not at interpreter exit
    except BrokenPipeError:
        # The reader went away (`kraft dump-log ... | head`): stop quietly, as Unix tools do, and
        # point stdout at /dev/null so that the interpreter's last flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13  # what a shell reports for a writer killed by SIGPIPE
    return result


if __name__ == "__main__":
    sys.exit(main())
