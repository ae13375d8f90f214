"""Spark data source options, as the batch source and the streaming source both check them:
names are case-insensitive (Spark lowercases them), an unknown one is an error that lists the
known ones, and a bad value is a ``ConfigError`` naming the option."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kraft.common.errors import ConfigError


def lowered_options(options: Mapping[str, Any], known: Mapping[str, str], what: str) -> dict[str, Any]:
    """``options`` with lowercased names; ``known`` maps lowercased names to their spelling."""
    lowered = {str(k).lower(): v for k, v in options.items()}
    unknown = sorted(k for k in lowered if k not in known)
    if unknown:
        raise ConfigError(
            f"unknown option(s) {', '.join(unknown)} for the {what}; known: {', '.join(known.values())}"
        )
    return lowered


def int_option(lowered: Mapping[str, Any], name: str) -> int | None:
    text = lowered.get(name.lower())
    if text is None:
        return None
    try:
        return int(str(text).strip())
    except ValueError:
        raise ConfigError(f"option {name} must be an integer, got {text!r}") from None


def bool_option(lowered: Mapping[str, Any], name: str, default: bool = False) -> bool:
    raw = lowered.get(name.lower())
    text = str(default if raw is None else raw).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"option {name} must be true or false, got {raw!r}")
    return text == "true"
