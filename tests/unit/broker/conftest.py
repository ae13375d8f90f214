"""Lets the broker tests use the protocol tests' kafka-python bridge (tests have no packages)."""

from __future__ import annotations

import sys
from pathlib import Path

_PROTOCOL_TESTS = str(Path(__file__).resolve().parent.parent / "protocol")
if _PROTOCOL_TESTS not in sys.path:
    sys.path.append(_PROTOCOL_TESTS)
