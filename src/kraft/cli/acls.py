"""``kraft acls``: Kafka's ``kafka-acls.sh`` (``AclCommand``) against brokers' client listeners.

    kraft acls --bootstrap-server HOST:PORT --add --allow-principal User:alice --operation Read \\
        --topic t [--resource-pattern-type prefixed] [--group g] [--cluster] [--transactional-id x]
    kraft acls --bootstrap-server HOST:PORT --remove [same filters] [--force]
    kraft acls --bootstrap-server HOST:PORT --list [--topic t ...] [--principal User:alice]

Options and output follow Kafka 4.x's ``AclCommand``: principals are ``TYPE:NAME``; hosts default to
``*`` when a principal is given; ``--operation`` may repeat (default ``All``) and is checked against
what the resource type supports; ``--producer`` stands for WRITE, DESCRIBE and CREATE on the topics
(with ``--idempotent``, IDEMPOTENT_WRITE on the cluster; with ``--transactional-id``, WRITE and
DESCRIBE on it) and ``--consumer`` for READ and DESCRIBE on the topics and READ on the groups.
``--add`` prints ``Adding ACLs for resource `ResourcePattern(...)`:`` with one TAB-led entry per
ACL, then the current ACLs of those resources; ``--remove`` asks for confirmation unless ``--force``;
``--list`` prints ``Current ACLs for resource `...`:`` blocks (after ``ACLs for principal `P``` with
``--principal``). ``--resource-pattern-type`` is LITERAL by default for ``--add``, ANY by default for
``--list`` and ``--remove`` (filters may also be MATCH). ``--json`` prints one JSON object instead.

Departures from Kafka: errors go to stderr, misuse exits 2 (Kafka: 1).

Exit status: 0 success, 1 when an operation failed or the cluster could not be reached, 2 on misuse.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import TextIO

from kraft.cli.common import (
    Connect,
    UsageError,
    add_json_option,
    add_timeout_options,
    broker_tool,
    check_timeouts,
    one_line,
)
from kraft.client.broker_admin import BrokerAdminClient
from kraft.client.connection import AdminError
from kraft.common.errors import KraftError
from kraft.common.principal import KafkaPrincipal
from kraft.security.acls import (
    CLUSTER_NAME,
    WILDCARD,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

PROG = "kraft acls"
Op = AclOperation
RT = ResourceType

# Kafka's AclCommand: what each resource type supports (ALL everywhere).
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    RT.TOPIC: frozenset(
        {
            Op.READ,
            Op.WRITE,
            Op.CREATE,
            Op.DESCRIBE,
            Op.DELETE,
            Op.ALTER,
            Op.DESCRIBE_CONFIGS,
            Op.ALTER_CONFIGS,
            Op.ALL,
        }
    ),
    RT.GROUP: frozenset({Op.READ, Op.DESCRIBE, Op.DELETE, Op.ALL}),
    RT.CLUSTER: frozenset(
        {
            Op.CREATE,
            Op.CLUSTER_ACTION,
            Op.DESCRIBE_CONFIGS,
            Op.ALTER_CONFIGS,
            Op.IDEMPOTENT_WRITE,
            Op.ALTER,
            Op.DESCRIBE,
            Op.ALL,
        }
    ),
    RT.TRANSACTIONAL_ID: frozenset({Op.DESCRIBE, Op.WRITE, Op.ALL}),
    RT.DELEGATION_TOKEN: frozenset({Op.DESCRIBE, Op.ALL}),
    RT.USER: frozenset({Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS, Op.ALL}),
}


class _CommandError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Add, remove or list ACLs (kafka-acls.sh).")
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT", help="brokers to connect to"
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", action="store_true", help="add the ACLs described by the options")
    action.add_argument("--remove", action="store_true", help="remove the ACLs matching the options")
    action.add_argument("--list", action="store_true", help="list the ACLs matching the options")
    parser.add_argument("--topic", action="append", default=[], help="a topic (repeatable; * for all)")
    parser.add_argument("--group", action="append", default=[], help="a consumer group (repeatable)")
    parser.add_argument("--cluster", action="store_true", help="the cluster resource")
    parser.add_argument("--transactional-id", action="append", default=[], help="a transactional id")
    parser.add_argument("--delegation-token", action="append", default=[], help="a delegation token")
    parser.add_argument("--user-principal", action="append", default=[], help="a user resource")
    parser.add_argument(
        "--resource-pattern-type",
        type=str.upper,
        choices=[
            p.name for p in (PatternType.ANY, PatternType.MATCH, PatternType.LITERAL, PatternType.PREFIXED)
        ],
        default=None,
        help="LITERAL (default for --add), PREFIXED, or for --list/--remove also ANY (default) and MATCH",
    )
    parser.add_argument("--allow-principal", action="append", default=[], help="TYPE:NAME to allow")
    parser.add_argument("--deny-principal", action="append", default=[], help="TYPE:NAME to deny")
    parser.add_argument("--allow-host", action="append", default=[], help="host to allow from (default *)")
    parser.add_argument("--deny-host", action="append", default=[], help="host to deny from (default *)")
    parser.add_argument("--principal", action="append", default=[], help="with --list: only this principal's")
    parser.add_argument(
        "--operation", action="append", default=[], help="Read, Write, Describe, ... (default All)"
    )
    parser.add_argument("--producer", action="store_true", help="the ACLs a producer needs")
    parser.add_argument("--consumer", action="store_true", help="the ACLs a consumer needs (with --group)")
    parser.add_argument("--idempotent", action="store_true", help="with --producer: IDEMPOTENT_WRITE")
    parser.add_argument("--force", action="store_true", help="do not ask before removing")
    add_json_option(parser)
    add_timeout_options(parser, request_timeout_ms_default=10_000)
    return parser


# -- parsing ------------------------------------------------------------------------------------------


def parse_operation(text: str) -> AclOperation:
    """``Read``, ``read``, ``ClusterAction``, ``CLUSTER_ACTION`` -> the operation."""
    wanted = text.replace("_", "").replace("-", "").lower()
    for op in AclOperation:
        if op not in (Op.UNKNOWN, Op.ANY) and op.name.replace("_", "").lower() == wanted:
            return op
    names = ", ".join(op.display for op in AclOperation if op not in (Op.UNKNOWN, Op.ANY))
    raise UsageError(f"unknown operation {text!r} (one of {names})")


def _principal(text: str) -> str:
    try:
        return str(KafkaPrincipal.parse(text))
    except KraftError as e:
        raise UsageError(str(e)) from None


def _resources(
    ns: argparse.Namespace, pattern_type: PatternType
) -> list[tuple[ResourceType, str, PatternType]]:
    out: list[tuple[ResourceType, str, PatternType]] = []
    out += [(RT.TOPIC, t, pattern_type) for t in ns.topic]
    out += [(RT.GROUP, g, pattern_type) for g in ns.group]
    out += [(RT.TRANSACTIONAL_ID, x, pattern_type) for x in ns.transactional_id]
    out += [(RT.DELEGATION_TOKEN, x, pattern_type) for x in ns.delegation_token]
    out += [(RT.USER, x, pattern_type) for x in ns.user_principal]
    if ns.cluster:
        out.append((RT.CLUSTER, CLUSTER_NAME, PatternType.LITERAL))
    return out


def _entries(ns: argparse.Namespace, operations: Iterable[AclOperation]) -> list[AccessControlEntry]:
    entries: list[AccessControlEntry] = []
    for permission, principals, hosts in (
        (AclPermissionType.ALLOW, ns.allow_principal, ns.allow_host),
        (AclPermissionType.DENY, ns.deny_principal, ns.deny_host),
    ):
        for principal in principals:
            for host in hosts or [WILDCARD]:
                for op in operations:
                    entries.append(AccessControlEntry(_principal(principal), host, op, permission))
    return entries


def bindings_to_add(ns: argparse.Namespace) -> list[AclBinding]:
    """The ACLs ``--add`` asks for (Kafka's ``getResourceToAcls``), checked like AclCommand does."""
    pattern_type = PatternType[ns.resource_pattern_type or "LITERAL"]
    if pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise UsageError(
            f"A '--resource-pattern-type' value of '{pattern_type.name}' is not valid when adding acls."
        )
    if not ns.allow_principal and not ns.deny_principal:
        raise UsageError(
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."
        )
    wanted: list[tuple[ResourceType, str, PatternType, list[AclOperation]]] = []
    if ns.producer or ns.consumer:
        if ns.producer:
            for t in ns.topic:
                wanted.append((RT.TOPIC, t, pattern_type, [Op.WRITE, Op.DESCRIBE, Op.CREATE]))
            for x in ns.transactional_id:
                wanted.append((RT.TRANSACTIONAL_ID, x, pattern_type, [Op.WRITE, Op.DESCRIBE]))
            if ns.idempotent:
                wanted.append((RT.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, [Op.IDEMPOTENT_WRITE]))
        if ns.consumer:
            if not ns.group:
                raise UsageError("--consumer needs --group")
            for t in ns.topic:
                wanted.append((RT.TOPIC, t, pattern_type, [Op.READ, Op.DESCRIBE]))
            for g in ns.group:
                wanted.append((RT.GROUP, g, pattern_type, [Op.READ]))
    else:
        operations = [parse_operation(o) for o in ns.operation] or [Op.ALL]
        for rt, name, pt in _resources(ns, pattern_type):
            unsupported = [o for o in operations if o not in SUPPORTED_OPERATIONS[rt]]
            if unsupported:
                supported = ", ".join(sorted(o.display for o in SUPPORTED_OPERATIONS[rt]))
                raise _CommandError(f"ResourceType {rt.name} only supports operations {supported}")
            wanted.append((rt, name, pt, operations))
    if not wanted:
        raise UsageError("You must specify a resource: --topic, --group, --cluster, --transactional-id, ...")
    out: list[AclBinding] = []
    for rt, name, pt, operations in wanted:
        for entry in _entries(ns, operations):
            binding = AclBinding(ResourcePattern(rt, name, pt), entry)
            if binding not in out:
                out.append(binding)
    return out


def filters_of(ns: argparse.Namespace) -> list[AclBindingFilter]:
    """The filters ``--list`` / ``--remove`` ask for: one per resource (none: every ACL), narrowed to
    the principals, hosts and operations given."""
    pattern_type = PatternType[ns.resource_pattern_type or "ANY"]
    resources = _resources(ns, pattern_type)
    patterns: list[tuple[ResourceType, str | None, PatternType]] = [
        (rt, n, pt) for rt, n, pt in resources
    ] or [(RT.ANY, None, pattern_type)]
    operations = [parse_operation(o) for o in ns.operation]
    entries: list[tuple[str | None, str | None, AclOperation, AclPermissionType]] = []
    for permission, principals, hosts in (
        (AclPermissionType.ALLOW, ns.allow_principal, ns.allow_host),
        (AclPermissionType.DENY, ns.deny_principal, ns.deny_host),
    ):
        for principal in principals:
            for host in hosts or [None]:
                for op in operations or [Op.ANY]:
                    entries.append((_principal(principal), host, op, permission))
    if not entries:
        entries = [(None, None, op, AclPermissionType.ANY) for op in operations or [Op.ANY]]
    return [
        AclBindingFilter(rt, name, pt, principal, host, op, permission)
        for rt, name, pt in patterns
        for principal, host, op, permission in entries
    ]


# -- printing -----------------------------------------------------------------------------------------


def _by_resource(bindings: Iterable[AclBinding]) -> dict[ResourcePattern, list[AccessControlEntry]]:
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for b in sorted(bindings):
        grouped.setdefault(b.pattern, []).append(b.entry)
    return grouped


def _print_blocks(title: str, bindings: Iterable[AclBinding], out: TextIO) -> None:
    for pattern, entries in _by_resource(bindings).items():
        body = "\n".join(f"\t{e}" for e in entries)
        print(f"{title} `{pattern}`: \n{body} \n", file=out)


def binding_json(b: AclBinding) -> dict[str, str]:
    return {
        "resource_type": b.pattern.resource_type.name,
        "resource_name": b.pattern.name,
        "pattern_type": b.pattern.pattern_type.name,
        "principal": b.entry.principal,
        "host": b.entry.host,
        "operation": b.entry.operation.name,
        "permission_type": b.entry.permission_type.name,
    }


# -- actions ------------------------------------------------------------------------------------------


def _current(client: BrokerAdminClient, patterns: Iterable[ResourcePattern]) -> list[AclBinding]:
    found: list[AclBinding] = []
    for p in dict.fromkeys(patterns):
        found += client.describe_acls(AclBindingFilter(p.resource_type, p.name, p.pattern_type))
    return sorted(set(found))


def _add(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO) -> None:
    bindings = bindings_to_add(ns)
    errors = client.create_acls(bindings)
    failed = [(b, e) for b, e in zip(bindings, errors, strict=True) if e is not None]
    current = _current(client, (b.pattern for b in bindings))
    if ns.json:
        print(
            json.dumps(
                {
                    "added": [binding_json(b) for b, e in zip(bindings, errors, strict=True) if e is None],
                    "failed": [dict(binding_json(b), error=str(e)) for b, e in failed],
                    "acls": [binding_json(b) for b in current],
                }
            ),
            file=out,
        )
    else:
        for pattern, entries in _by_resource(bindings).items():
            body = "\n".join(f"\t{e}" for e in entries)
            print(f"Adding ACLs for resource `{pattern}`: \n {body} \n", file=out)
        _print_blocks("Current ACLs for resource", current, out)
    if failed:
        raise _CommandError(*(f"Error while adding ACL {b.entry} on {b.pattern}: {e}" for b, e in failed))


def _remove(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO, err: TextIO) -> None:
    filters = filters_of(ns)
    if not ns.force:
        print(
            "Are you sure you want to remove ACLs: \n" + "\n".join(f" \t{f}" for f in filters) + " \n (y/n)",
            file=out,
        )
        if not sys.stdin.readline().strip().lower().startswith("y"):
            return
    results = client.delete_acls(filters)
    removed = sorted({b for _, deleted in results for b in deleted})
    failed = [(f, e) for f, (e, _) in zip(filters, results, strict=True) if e is not None]
    if ns.json:
        print(
            json.dumps(
                {
                    "removed": [binding_json(b) for b in removed],
                    "failed": [{"filter": str(f), "error": str(e)} for f, e in failed],
                }
            ),
            file=out,
        )
    else:
        _print_blocks("Removed ACLs for resource", removed, out)
    if failed:
        raise _CommandError(*(f"Error while removing ACLs by filter {f}: {e}" for f, e in failed))


def _list(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO) -> None:
    found: set[AclBinding] = set()
    for f in filters_of(ns):
        found.update(client.describe_acls(f))
    principals = [_principal(p) for p in ns.principal]
    if ns.json:
        shown = [b for b in sorted(found) if not principals or b.entry.principal in principals]
        print(json.dumps({"acls": [binding_json(b) for b in shown]}), file=out)
        return
    if not principals:
        _print_blocks("Current ACLs for resource", found, out)
        return
    for principal in principals:
        print(f"ACLs for principal `{principal}`", file=out)
        _print_blocks("Current ACLs for resource", (b for b in found if b.entry.principal == principal), out)


@broker_tool(PROG, build_parser)
def main(ns: argparse.Namespace, _args: list[str], connect: Connect, out: TextIO, err: TextIO) -> int:
    check_timeouts(ns)
    if ns.principal and not ns.list:
        raise UsageError("--principal is only valid with --list")
    try:
        if ns.add:
            bindings_to_add(ns)  # misuse is reported before connecting
        client = connect()
        with client:
            if ns.add:
                _add(ns, client, out)
            elif ns.remove:
                _remove(ns, client, out, err)
            else:
                _list(ns, client, out)
    except _CommandError as e:
        for line in e.args:
            print(f"Error while executing ACL command: {line}", file=err)
        return 1
    except AdminError as e:
        print(f"Error while executing ACL command: {one_line(e)}", file=err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
