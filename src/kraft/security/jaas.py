"""A small, pure parser of Kafka's ``sasl.jaas.config`` values (Kafka's ``JaasConfig``).

Grammar, one or more entries::

    <LoginModuleClass> <required|requisite|sufficient|optional> (<name>=<value>)* ;

where a value is a double-quoted string (``\\"`` and ``\\\\`` escape) or a bare word. Kafka wants
exactly one entry in ``sasl.jaas.config``; ``parse_jaas_config`` checks that too. Every error is a
``ConfigError`` that starts with the property name and says where the text went wrong.

What it must not do: read files (a ``java.security.auth.login.config`` file is not supported) or
log option values (they hold passwords).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kraft.common.errors import ConfigError

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
CONTROL_FLAGS = ("required", "requisite", "sufficient", "optional")
_SPECIAL = frozenset('=;"')


@dataclass(frozen=True, slots=True)
class JaasEntry:
    """One login module with its options (``repr`` hides the values: they are secrets)."""

    login_module: str
    control_flag: str
    options: Mapping[str, str] = field(repr=False)

    def option(self, name: str) -> str | None:
        return self.options.get(name)


def _tokens(text: str, prop: str) -> list[tuple[str, bool]]:
    """(token, quoted) pairs; ``=`` and ``;`` are their own unquoted tokens."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "=;":
            out.append((c, False))
            i += 1
        elif c == '"':
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise ConfigError(f"{prop}: a quoted value is not closed (missing '\"')")
                c = text[i]
                if c == "\\" and i + 1 < n:
                    chars.append(text[i + 1])
                    i += 2
                elif c == '"':
                    i += 1
                    break
                else:
                    chars.append(c)
                    i += 1
            out.append(("".join(chars), True))
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in _SPECIAL:
                i += 1
            out.append((text[start:i], False))
    return out


def parse_jaas_entries(text: str, prop: str = "sasl.jaas.config") -> list[JaasEntry]:
    """Every entry of a JAAS configuration text, in order."""
    tokens = _tokens(text, prop)
    entries: list[JaasEntry] = []
    pos = 0

    def word(what: str) -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ConfigError(f"{prop}: expected {what} but the value ended (is the final ';' missing?)")
        token, quoted = tokens[pos]
        if quoted or token in ("=", ";"):
            raise ConfigError(f"{prop}: expected {what}, found {token!r}")
        pos += 1
        return token

    while pos < len(tokens):
        module = word("a login module class name")
        flag = word("a control flag (required, requisite, sufficient or optional)")
        if flag.lower() not in CONTROL_FLAGS:
            raise ConfigError(
                f"{prop}: {flag!r} after {module} is not a control flag "
                "(required, requisite, sufficient or optional)"
            )
        options: dict[str, str] = {}
        while True:
            if pos >= len(tokens):
                raise ConfigError(f"{prop}: the entry for {module} does not end with ';'")
            if tokens[pos] == (";", False):
                pos += 1
                break
            name = word("an option name or ';'")
            if pos >= len(tokens) or tokens[pos] != ("=", False):
                raise ConfigError(f"{prop}: option {name!r} of {module} has no '=value'")
            pos += 1
            if pos >= len(tokens) or tokens[pos] in ((";", False), ("=", False)):
                raise ConfigError(f"{prop}: option {name!r} of {module} has no value")
            if name in options:
                raise ConfigError(f"{prop}: option {name!r} of {module} appears twice")
            options[name] = tokens[pos][0]
            pos += 1
        entries.append(JaasEntry(module, flag.lower(), options))
    return entries


def parse_jaas_config(text: str, prop: str = "sasl.jaas.config") -> JaasEntry:
    """The single entry a ``sasl.jaas.config`` property must hold (Kafka: "must contain exactly one
    login module")."""
    entries = parse_jaas_entries(text, prop)
    if len(entries) != 1:
        raise ConfigError(f"{prop}: must contain exactly one login module, found {len(entries)}")
    return entries[0]
