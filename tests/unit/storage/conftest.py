"""Makes the shared ``ReplicatedLog`` contract suite (tests/unit/raft/log_contract.py) importable."""

from __future__ import annotations

import sys
from pathlib import Path

_RAFT_TESTS = str(Path(__file__).resolve().parents[1] / "raft")
if _RAFT_TESTS not in sys.path:
    sys.path.append(_RAFT_TESTS)
