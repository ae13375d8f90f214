"""``kraft configs``: Kafka's ``kafka-configs.sh`` for topic and broker configs and users' SCRAM
credentials, against brokers.

    kraft configs --bootstrap-server HOST:PORT --describe --entity-type topics [--entity-name T] [--all]
    kraft configs --bootstrap-server HOST:PORT --describe --entity-type brokers
        [--entity-name ID | --entity-default] [--all]
    kraft configs --bootstrap-server HOST:PORT --alter --entity-type topics|brokers
        (--entity-name N | --entity-default) [--add-config k=v,k2=[v1,v2]] [--delete-config k,k2]
    kraft configs --bootstrap-server HOST:PORT --describe --entity-type users [--entity-name U]
    kraft configs --bootstrap-server HOST:PORT --alter --entity-type users --entity-name U
        [--add-config 'SCRAM-SHA-256=[iterations=8192,password=P],SCRAM-SHA-512=[password=P]']
        [--delete-config SCRAM-SHA-512]

``--describe`` prints Kafka 4.x's lines: ``Dynamic configs for topic X are:`` (``All configs ...``
with ``--all``; ``Default configs for brokers in the cluster are:`` for the cluster default), then
``  name=value sensitive=false synonyms={SOURCE:name=value, ...}`` per entry, sorted by name. Without
``--all`` only the entity's own dynamic entries are shown (DYNAMIC_TOPIC_CONFIG,
DYNAMIC_BROKER_CONFIG or DYNAMIC_DEFAULT_BROKER_CONFIG), and an entity that does not exist prints
``The topic 'X' doesn't exist and doesn't have dynamic config.`` (Kafka 4.1+). Without a name every
topic (or every live broker, then the default) is described. ``--alter`` checks that the keys to
delete are set (``Invalid config(s): k``), sends one IncrementalAlterConfigs (deletes, then sets)
and prints ``Completed updating config for topic X.`` / ``Completed updating default config for
brokers in the cluster.``. ``--json`` prints one JSON object instead.

Users (KIP-554, as Kafka's ``ConfigCommand``): ``--describe`` prints ``SCRAM credential configs for
user-principal 'U' are SCRAM-SHA-256=iterations=8192, ...`` per user that has a credential (nothing
for one without); ``--alter`` takes only SCRAM mechanism names as keys (``iterations`` defaults to
4096 and must be at least 4096; the password must not be empty), salts and hashes the password
here with a fresh random salt, and sends AlterUserScramCredentials, so the password never leaves
this process. Unlike Kafka's admin client, which puts every change into one request (which a KRaft
controller refuses as DUPLICATE_RESOURCE when one user has two), each mechanism goes in its own
request: deletions, then upsertions, stopping at the first error. No quotas.

Only the ``topics``, ``brokers`` and ``users`` entity types exist here (no clients, ips,
broker-loggers, client-metrics or groups, no ``--add-config-file``, ``--topic``/``--broker``/``--user``
shortcuts or ``--bootstrap-controller``).

Exit status: 0 success, 1 when an operation failed or the cluster could not be reached, 2 on misuse.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from kraft.cli.common import (
    Connect,
    UsageError,
    add_json_option,
    add_timeout_options,
    broker_tool,
    check_timeouts,
    one_line,
)
from kraft.client.broker_admin import (
    AlterConfigOp,
    ApiError,
    BrokerAdminClient,
    ConfigEntry,
    ConfigOperation,
    ConfigResource,
    ConfigSource,
    ScramUpsertion,
)
from kraft.client.connection import AdminError
from kraft.metadata.scram import DEFAULT_ITERATIONS, MIN_ITERATIONS, ScramMechanism
from kraft.protocol.error_codes import ErrorCode
from kraft.security.scram import SALT_BYTES, salted_password

PROG = "kraft configs"
TOPICS, BROKERS, USERS = "topics", "brokers", "users"
ENTITY_TYPES = (TOPICS, BROKERS, USERS)
# ConfigCommand's pattern of a SCRAM credential's value (after the brackets are stripped).
_SCRAM_VALUE = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.DOTALL)
_LEGAL_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_NAME = 249
# Kafka splits --add-config on commas (and each item on '=') outside square brackets.
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
_KEY = re.compile(r"[$a-zA-Z0-9._-]*")


class _CommandError(Exception):
    """The operation failed; the message is printed as it is."""


class _ServerError(Exception):
    """The cluster refused the operation; printed after Kafka's "Error while executing" prefix."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="This tool helps to manipulate and describe entity config for a topic or broker",
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT", help="The Kafka servers to connect to.")
    parser.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    parser.add_argument("--describe", action="store_true", help="List configs for the given entity.")
    parser.add_argument(
        "--all", action="store_true", help="List all configs for the given entity, including static configs."
    )
    parser.add_argument(
        "--entity-type", action="append", metavar="TYPE", help="Type of entity (topics/brokers/users)"
    )
    names = parser.add_mutually_exclusive_group()
    names.add_argument("--entity-name", metavar="NAME", help="Name of entity (topic name/broker id/user)")
    names.add_argument(
        "--entity-default", action="store_true", help="Default entity name for brokers (the cluster default)"
    )
    parser.add_argument(
        "--add-config",
        metavar="K=V,...",
        help="Key Value pairs of configs to add. Square brackets can be used to group values which contain "
        "commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.",
    )
    parser.add_argument(
        "--delete-config", action="append", metavar="K,...", help="config keys to remove 'k1,k2'"
    )
    add_json_option(parser)
    add_timeout_options(parser, request_timeout_ms_default=10_000)
    return parser


def validate(ns: argparse.Namespace) -> tuple[str, str | None]:
    """Kafka's ``ConfigCommandOptions.checkArgs`` for what exists here.

    Returns:
        (entity type, entity name): the name is None when not given and "" for ``--entity-default``.

    Raises:
        UsageError: the arguments do not make one valid command.
    """
    if ns.alter == ns.describe:
        raise UsageError("Command must include exactly one action: --describe, --alter")
    if ns.describe:
        for dest in ("add_config", "delete_config"):
            if getattr(ns, dest):
                raise UsageError(
                    f'Option "[describe]" can\'t be used with option "[{dest.replace("_", "-")}]"'
                )
    types: list[str] = ns.entity_type or []
    duplicates = sorted({t for t in types if types.count(t) > 1})
    if duplicates:
        raise UsageError(f"Duplicate entity type(s) specified: {','.join(duplicates)}")
    if ns.bootstrap_server is None:
        raise UsageError("--bootstrap-server must be specified")
    for entity_type in types:
        if entity_type not in ENTITY_TYPES:
            raise UsageError(
                f"Invalid entity type {entity_type}, the entity type must be one of "
                f"{', '.join(ENTITY_TYPES)} with a --bootstrap-server argument"
            )
    if not types:
        raise UsageError("At least one entity type must be specified")
    if len(types) > 1:
        raise UsageError(f"Only one entity type may be specified here, got {', '.join(types)}")
    entity_type = types[0]
    name: str | None = "" if ns.entity_default else ns.entity_name
    if name and entity_type == BROKERS:
        try:
            int(name)
        except ValueError:
            raise UsageError(
                f"The entity name for brokers must be a valid integer broker id, but it is: {name}"
            ) from None
    if ns.describe and ns.entity_default and entity_type == TOPICS:
        raise UsageError(f"--entity-default must not be specified with --describe of {entity_type}")
    if ns.alter:
        if entity_type == USERS and name == "":
            raise UsageError(
                "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials "
                "using --bootstrap-server."
            )
        if entity_type in (BROKERS, USERS):
            if name is None:
                raise UsageError(
                    "An entity-name or default entity must be specified with --alter of users, clients, "
                    "brokers or ips"
                )
        elif not name:
            raise UsageError(f"An entity name must be specified with --alter of {entity_type}")
        if ns.add_config is None and not ns.delete_config:
            raise UsageError("At least one of --add-config or --delete-config must be specified with --alter")
    if entity_type == TOPICS and name:
        validate_topic_name(name)
    check_timeouts(ns)
    return entity_type, name


def validate_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate`` (InvalidTopicException's message).

    Raises:
        UsageError: the name cannot be a topic's.
    """
    reason = None
    if name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > _MAX_TOPIC_NAME:
        reason = f"the length of '{name}' is longer than the max allowed length {_MAX_TOPIC_NAME}"
    elif not _LEGAL_TOPIC_CHARS.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    if reason is not None:
        raise UsageError(f"Topic name is invalid: {reason}")


def parse_add_config(text: str) -> dict[str, str]:
    """Kafka's ``parseConfigsToBeAdded``: ``k1=v1,k2=[v1,v2]`` -> {k1: v1, k2: "v1,v2"}.

    Raises:
        UsageError: an item that is not ``key=value``, or a key with characters Kafka refuses.
    """
    items = re.split("," + _OUTSIDE_BRACKETS, text)
    while items and items[-1] == "":  # Java's String.split drops trailing empty strings
        items.pop()
    configs: dict[str, str] = {}
    for item in items:
        pair = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, item)
        if len(pair) != 2:
            raise UsageError(
                'Invalid entity config: all configs to be added must be in the format "key=val" or  '
                '"key=[val1,val2]" to group values which contain commas.'
            )
        key = pair[0].strip()
        if not _KEY.fullmatch(key):
            raise UsageError(f"Invalid character found for config key: {key}")
        configs[key] = re.sub(r"\[?\]?", "", pair[1]).strip()
    return configs


def parse_delete_config(values: Sequence[str]) -> list[str]:
    keys: list[str] = []
    for value in values:
        keys.extend(k.strip() for k in value.split(",") if k.strip())
    return list(dict.fromkeys(keys))


def resource_for(entity_type: str, name: str) -> ConfigResource:
    return ConfigResource.topic(name) if entity_type == TOPICS else ConfigResource.broker(name)


def dynamic_source(entity_type: str, name: str) -> ConfigSource:
    """The source of an entity's own dynamic entries (what ``--describe`` shows without ``--all``)."""
    if entity_type == TOPICS:
        return ConfigSource.DYNAMIC_TOPIC_CONFIG
    return ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG if name == "" else ConfigSource.DYNAMIC_BROKER_CONFIG


def selected_entries(
    entries: Sequence[ConfigEntry], entity_type: str, name: str, describe_all: bool
) -> list[ConfigEntry]:
    source = dynamic_source(entity_type, name)
    return sorted((e for e in entries if describe_all or e.source == source), key=lambda e: e.name)


def _java(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_entry(entry: ConfigEntry) -> str:
    synonyms = ", ".join(f"{s.source.name}:{s.name}={_java(s.value)}" for s in entry.synonyms)
    return f"  {entry.name}={_java(entry.value)} sensitive={_java(entry.sensitive)} synonyms={{{synonyms}}}"


def header(entity_type: str, name: str, describe_all: bool) -> str:
    if name == "":
        return f"Default configs for {entity_type} in the cluster are:"
    return f"{'All' if describe_all else 'Dynamic'} configs for {entity_type[:-1]} {name} are:"


def entry_json(entry: ConfigEntry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "value": entry.value,
        "source": entry.source.name,
        "sensitive": entry.sensitive,
        "readOnly": entry.read_only,
        "synonyms": [{"name": s.name, "value": s.value, "source": s.source.name} for s in entry.synonyms],
    }


# ---------------------------------------------------------------------------------------------------
# Commands


def _describe(
    ns: argparse.Namespace,
    client: BrokerAdminClient,
    entity_type: str,
    name: str | None,
    out: TextIO,
    err: TextIO,
) -> None:
    if not ns.all and name is not None:
        missing = False
        if entity_type == TOPICS:
            missing = name not in {t.name for t in client.list_topics(include_internal=True)}
        elif name != "":
            missing = name not in {str(b.node_id) for b in client.describe_cluster()}
        if missing:
            message = f"The {entity_type[:-1]} '{name}' doesn't exist and doesn't have dynamic config."
            if ns.json:
                print(message, file=err)
                print(json.dumps({"entityType": entity_type, "entities": []}, indent=2), file=out)
            else:
                print(message, file=out)
            return
    if name is not None:
        entities = [name]
    elif entity_type == TOPICS:
        entities = [t.name for t in client.list_topics(include_internal=True)]
    else:
        entities = [str(b.node_id) for b in client.describe_cluster()] + [""]
    answered = client.describe_configs(
        [resource_for(entity_type, e) for e in entities], include_synonyms=True
    )
    described: list[dict[str, Any]] = []
    for entity in entities:
        if not ns.json:
            print(header(entity_type, entity, ns.all), file=out)
        entries = answered[resource_for(entity_type, entity)]
        if isinstance(entries, ApiError):
            raise _ServerError(f"{entries.name} for {entity_type[:-1]} '{entity}': {entries.text}")
        shown = selected_entries(entries, entity_type, entity, ns.all)
        if ns.json:
            described.append({"name": entity if entity else None, "configs": [entry_json(e) for e in shown]})
        else:
            for entry in shown:
                print(format_entry(entry), file=out)
    if ns.json:
        print(json.dumps({"entityType": entity_type, "entities": described}, indent=2), file=out)


def _alter(
    ns: argparse.Namespace, client: BrokerAdminClient, entity_type: str, name: str, out: TextIO
) -> None:
    to_add = parse_add_config(ns.add_config) if ns.add_config is not None else {}
    to_delete = parse_delete_config(ns.delete_config or ())
    resource = resource_for(entity_type, name)
    current = client.describe_configs([resource])[resource]
    if isinstance(current, ApiError):
        raise _ServerError(f"{current.name} for {entity_type[:-1]} '{name}': {current.text}")
    present = {e.name for e in selected_entries(current, entity_type, name, describe_all=False)}
    invalid = [k for k in to_delete if k not in present]
    if invalid:
        raise _CommandError(f"Invalid config(s): {','.join(invalid)}")
    operations = [AlterConfigOp(k, ConfigOperation.DELETE, "") for k in to_delete]
    operations += [AlterConfigOp(k, ConfigOperation.SET, v) for k, v in to_add.items()]
    error = client.incremental_alter_configs(resource, operations)
    if error is not None:
        raise _ServerError(f"{error.name} for {entity_type[:-1]} '{name or '<default>'}': {error.text}")
    if ns.json:
        print(
            json.dumps(
                {"entityType": entity_type, "name": name or None, "set": to_add, "deleted": to_delete},
                indent=2,
            ),
            file=out,
        )
    elif name:
        print(f"Completed updating config for {entity_type[:-1]} {name}.", file=out)
    else:
        print(f"Completed updating default config for {entity_type} in the cluster.", file=out)


# ---------------------------------------------------------------------------------------------------
# Users: SCRAM credentials (KIP-554)


def scram_description(credentials: Sequence[tuple[int, int]]) -> str:
    """``SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096`` (ConfigCommand's text)."""
    return ", ".join(f"{ScramMechanism.from_type(m).mechanism_name}=iterations={i}" for m, i in credentials)


def _describe_users(ns: argparse.Namespace, client: BrokerAdminClient, name: str | None, out: TextIO) -> None:
    if name == "":
        described: dict[str, list[tuple[int, int]] | ApiError] = {}  # quotas only in Kafka: none here
    else:
        described = client.describe_user_scram_credentials(None if name is None else [name])
    entities: list[dict[str, Any]] = []
    for user in sorted(described):
        credentials = described[user]
        if isinstance(credentials, ApiError):
            if credentials.code == ErrorCode.RESOURCE_NOT_FOUND:
                continue  # Kafka's DescribeUserScramCredentialsResult.users() leaves them out
            if not ns.json:
                print(
                    f"Error retrieving SCRAM credential configs for user-principal '{user}': "
                    f"{credentials.name}: {credentials.text}",
                    file=out,
                )
            continue
        if ns.json:
            entities.append(
                {
                    "name": user,
                    "credentials": [
                        {"mechanism": ScramMechanism.from_type(m).mechanism_name, "iterations": i}
                        for m, i in credentials
                    ],
                }
            )
        else:
            print(
                f"SCRAM credential configs for user-principal '{user}' are {scram_description(credentials)}",
                file=out,
            )
    if ns.json:
        print(json.dumps({"entityType": USERS, "entities": entities}, indent=2), file=out)


def scram_upsertion(user: str, mechanism: ScramMechanism, value: str) -> ScramUpsertion:
    """ConfigCommand's ``iterationsAndPasswordBytes``, then the client-side salting of KIP-554.

    Raises:
        _CommandError: the value is not ``[iterations=N,]password=P`` or N is below the minimum.
        _ServerError: an empty password (Kafka's admin client refuses it as UNACCEPTABLE_CREDENTIAL).
    """
    match = _SCRAM_VALUE.fullmatch(value)
    if match is None:
        raise _CommandError(f"Invalid credential property {mechanism.mechanism_name}={value}")
    iterations_text, password = match.group(1), match.group(2)
    iterations = int(iterations_text) if iterations_text not in (None, "", "-1") else DEFAULT_ITERATIONS
    if iterations < MIN_ITERATIONS:
        raise _CommandError(
            f"Iterations {iterations} is less than the minimum {MIN_ITERATIONS} required for "
            f"{mechanism.mechanism_name}"
        )
    if not password:
        raise _ServerError("Password must not be empty")
    salt = secrets.token_bytes(SALT_BYTES)
    return ScramUpsertion(
        user=user,
        mechanism=int(mechanism),
        iterations=iterations,
        salt=salt,
        salted_password=salted_password(mechanism, password, salt, iterations),
    )


def _alter_user(ns: argparse.Namespace, client: BrokerAdminClient, user: str, out: TextIO) -> None:
    to_add = parse_add_config(ns.add_config) if ns.add_config is not None else {}
    to_delete = parse_delete_config(ns.delete_config or ())
    unknown_add = [k for k in to_add if ScramMechanism.from_name(k) is None]
    if unknown_add:
        raise _CommandError(
            f"Only quota and SCRAM credential configs can be added for '{USERS}' using --bootstrap-server. "
            f"Unexpected config names: {', '.join(unknown_add)} (kraft has no quotas)"
        )
    unknown_delete = [k for k in to_delete if ScramMechanism.from_name(k) is None]
    if unknown_delete:
        raise _CommandError(
            f"Only quota and SCRAM credential configs can be deleted for '{USERS}' using --bootstrap-server. "
            f"Unexpected config names: {', '.join(unknown_delete)} (kraft has no quotas)"
        )
    upsertions = []
    for key, value in to_add.items():
        mechanism = ScramMechanism.from_name(key)
        assert mechanism is not None
        upsertions.append(scram_upsertion(user, mechanism, value))
    for key in to_delete:
        mechanism = ScramMechanism.from_name(key)
        assert mechanism is not None
        error = client.alter_user_scram_credentials(deletions=[(user, int(mechanism))])[user]
        if error is not None:
            raise _ServerError(f"{error.name} for user '{user}' ({key}): {error.text}")
    for upsertion in upsertions:
        error = client.alter_user_scram_credentials(upsertions=[upsertion])[user]
        if error is not None:
            key = ScramMechanism.from_type(upsertion.mechanism).mechanism_name
            raise _ServerError(f"{error.name} for user '{user}' ({key}): {error.text}")
    if ns.json:
        print(
            json.dumps(
                {"entityType": USERS, "name": user, "set": sorted(to_add), "deleted": to_delete}, indent=2
            ),
            file=out,
        )
    else:
        print(f"Completed updating config for user {user}.", file=out)


# ---------------------------------------------------------------------------------------------------
# main


@broker_tool(PROG, build_parser)
def main(ns: argparse.Namespace, args: list[str], connect: Connect, out: TextIO, err: TextIO) -> int:
    entity_type, name = validate(ns)
    if ns.add_config is not None:
        parse_add_config(ns.add_config)  # refuse malformed input before connecting
    client = connect()
    try:
        with client:
            if entity_type == USERS and ns.describe:
                _describe_users(ns, client, name, out)
            elif entity_type == USERS:
                assert name  # validate() requires one for --alter
                _alter_user(ns, client, name, out)
            elif ns.describe:
                _describe(ns, client, entity_type, name, out, err)
            else:
                assert name is not None  # validate() requires one for --alter
                _alter(ns, client, entity_type, name, out)
    except _CommandError as e:
        print(str(e), file=err)
        return 1
    except (_ServerError, AdminError) as e:
        # Kafka quotes the command line
        print(f"Error while executing config command with args '{' '.join(args)}': {one_line(e)}", file=err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
