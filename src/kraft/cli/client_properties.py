"""The ``key=value`` options and properties files of the console tools (Kafka's
``CommandLineUtils.parseKeyValueArgs`` and ``Utils.loadProps``), and typed reads of them.

Every problem is a ``UsageError`` naming the property, so that a tool exits 2 before it connects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from kraft.cli.common import UsageError
from kraft.common.config import load_properties
from kraft.common.errors import ConfigError

if TYPE_CHECKING:
    from kraft.client.security import ClientSecurityConfig

COMMAND_CONFIG_OPTION = "--command-config"


def parse_key_value_args(items: Iterable[str]) -> dict[str, str]:
    """``["a=1", "b=x=y", "c"]`` -> ``{"a": "1", "b": "x=y", "c": ""}``: split at the first ``=``;
    a key without one gets the empty value, as Kafka's tools accept.

    Raises:
        UsageError: an item with an empty key.
    """
    props: dict[str, str] = {}
    for item in items:
        key, _, value = item.partition("=")
        if not key.strip():
            raise UsageError(f"Invalid command line properties: '{item}' (expected key=value)")
        props[key.strip()] = value
    return props


def merged_properties(path: str | None, items: Sequence[str] | None) -> dict[str, str]:
    """The properties of the file at ``path`` (if any), overridden by the ``key=value`` ``items``
    (Kafka: the command-line properties take precedence over the config file).

    Raises:
        UsageError: the file cannot be read or parsed, or an item has no key.
    """
    props: dict[str, str] = {}
    if path is not None:
        try:
            props.update(load_properties(path))
        except ConfigError as e:
            raise UsageError(str(e)) from None
    props.update(parse_key_value_args(items or ()))
    return props


def bool_property(props: Mapping[str, str], name: str, default: bool = False) -> bool:
    """Kafka's formatter and reader rule: true when the value is "true" (trimmed, any case)."""
    value = props.get(name)
    return default if value is None else value.strip().lower() == "true"


def int_property(props: Mapping[str, str], name: str, default: int, *, minimum: int | None = None) -> int:
    """An integer property, ``default`` when absent.

    Raises:
        UsageError: not an integer, or below ``minimum``.
    """
    raw = props.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise UsageError(f"Invalid value {raw} for configuration {name}: Not a number of type INT") from None
    if minimum is not None and value < minimum:
        raise UsageError(f"Invalid value {value} for configuration {name}: Value must be at least {minimum}")
    return value


def warn_unknown(props: Mapping[str, str], known: Iterable[str], err: TextIO) -> None:
    """Kafka's client warning for each supplied property it does not use, sorted by name."""
    known_names = set(known)
    for name in sorted(props):
        if name not in known_names:
            print(f"WARN The configuration '{name}' was supplied but isn't a known config.", file=err)


def config_file(
    command_config: str | None, legacy: str | None, legacy_option: str, err: TextIO
) -> str | None:
    """The client properties file of a console tool: ``--command-config`` (Kafka 4.2, KIP-1147), or
    the older ``legacy_option`` (``--producer.config``, ``--consumer.config``), which still works
    and is warned about as deprecated, as Kafka does.

    Raises:
        UsageError: both are given.
    """
    if command_config is not None and legacy is not None:
        raise UsageError(f"Options {legacy_option} and {COMMAND_CONFIG_OPTION} cannot be specified together.")
    if legacy is not None:
        print(
            f"WARN Option {legacy_option} is deprecated and will be removed in a future version. "
            f"Use {COMMAND_CONFIG_OPTION} instead.",
            file=err,
        )
        return legacy
    return command_config


def security_of(props: Mapping[str, str]) -> ClientSecurityConfig | None:
    """TLS and SASL from a tool's client properties (``security.protocol``, ``sasl.*``, ``ssl.*``:
    ``kraft.client.security``); None for PLAINTEXT.

    Raises:
        UsageError: a setting is wrong or a PEM file does not load (the property is named).
    """
    from kraft.client.security import client_security

    try:
        security = client_security(props)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    return None if security.protocol == "PLAINTEXT" else security


def known_properties(names: Iterable[str]) -> frozenset[str]:
    """``names`` and the security properties every client reads."""
    from kraft.client.security import PROPERTIES

    return frozenset(names) | frozenset(PROPERTIES)
