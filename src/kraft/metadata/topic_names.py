"""Topic-name rules that controllers, brokers and tools apply alike (Kafka's ``Topic``).

Pure functions over names; nothing here reads an image.
"""

from __future__ import annotations

import re
from typing import Final

MAX_TOPIC_NAME_LENGTH: Final = 249
# Used with fullmatch: no "$", which would accept a trailing newline.
LEGAL_TOPIC_CHARS: Final = re.compile(r"[a-zA-Z0-9._-]+")
# Kafka's Topic.INTERNAL_TOPICS (spec 6.3).
INTERNAL_TOPICS: Final = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def topic_name_problem(name: str) -> str | None:
    """Kafka's ``Topic.validate``: why ``name`` is not a legal topic name, or None."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return (
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"topic name: {name}"
        )
    if not LEGAL_TOPIC_CHARS.fullmatch(name):
        return (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'"
        )
    return None


def collision_key(name: str) -> str:
    """Kafka's ``Topic.unifyCollisionChars``: names equal under this collide ('.' and '_' in metrics)."""
    return name.replace(".", "_")


def is_internal_topic(name: str | None) -> bool:
    return name in INTERNAL_TOPICS
