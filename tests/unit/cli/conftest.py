"""Lets the CLI tests serve a real node with the server tests' ``served_node`` (tests have no packages)."""

from __future__ import annotations

import sys
from pathlib import Path

_SERVER_TESTS = str(Path(__file__).resolve().parent.parent / "server")
if _SERVER_TESTS not in sys.path:
    sys.path.append(_SERVER_TESTS)
