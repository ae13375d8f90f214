"""Kafka-style configuration: Java ``.properties`` parsing and typed property readers.

``parse_properties`` follows ``java.util.Properties.load`` closely enough for Kafka config files:
``#``/``!`` comments, ``key=value``, ``key: value`` or ``key value``, whitespace around the
separator, backslash line continuations, and the escapes ``\\t \\n \\r \\f \\uXXXX``. Later keys
override earlier ones, as in Java.

The typed readers (``get_int`` and friends) raise ``ConfigError`` naming the property and the bad
value, so every configuration error a user sees says which line to fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from kraft.common.errors import ConfigError

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> list[str]:
    """Join continuation lines (an odd number of trailing backslashes) and drop comments/blanks."""
    out: list[str] = []
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None and (not line or line[0] in "#!"):
            continue
        if pending is not None:
            line = pending + line
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending = line[:-1]
            continue
        pending = None
        out.append(line)
    if pending is not None:
        out.append(pending)
    return out


def _unescape(s: str, where: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(s):
            break
        c = s[i]
        if c == "u":
            digits = s[i + 1 : i + 5]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ConfigError(f"{where}: malformed \\u escape")
            out.append(chr(int(digits, 16)))
            i += 5
            continue
        out.append(_ESCAPES.get(c, c))
        i += 1
    return "".join(out)


def _split_key(line: str) -> tuple[str, str]:
    """Split at the first unescaped ``=``, ``:`` or whitespace (Java's rules)."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(" \t\f")
    # One '=' or ':' may follow the key, with whitespace on either side ("key = value").
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def parse_properties(text: str, *, source: str = "<properties>") -> dict[str, str]:
    """Parse the text of a ``.properties`` file into an ordered dict."""
    props: dict[str, str] = {}
    for n, line in enumerate(_logical_lines(text), start=1):
        key, value = _split_key(line)
        where = f"{source}: entry {n} ({key or line!r})"
        props[_unescape(key, where)] = _unescape(value, where)
    return props


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read and parse a properties file; a missing or unreadable file is a ``ConfigError``."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ConfigError(f"configuration file {os.fspath(path)} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read configuration file {os.fspath(path)}: {e}") from None
    return parse_properties(text, source=os.fspath(path))


def get_str(props: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    value = props.get(name)
    if value is None:
        return default
    value = value.strip()
    return value if value else default


def require_str(props: Mapping[str, str], name: str) -> str:
    value = get_str(props, name)
    if value is None:
        raise ConfigError(f"{name} is required")
    return value


def get_int(
    props: Mapping[str, str],
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    raw = get_str(props, name)
    if raw is None:
        value = default
    else:
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be <= {maximum}, got {value}")
    return value


def get_bool(props: Mapping[str, str], name: str, default: bool) -> bool:
    raw = get_str(props, name)
    if raw is None:
        return default
    lowered = raw.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}")


def get_list(props: Mapping[str, str], name: str) -> list[str]:
    """A comma-separated list; blanks around items and empty items are dropped."""
    raw = get_str(props, name)
    if raw is None:
        return []
    return [item.strip() for item in raw.split(",") if item.strip()]
