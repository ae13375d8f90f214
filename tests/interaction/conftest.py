"""``--rewrite``: write each transcript's actual output in place of its expected blocks."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rewrite",
        action="store_true",
        default=False,
        help="rewrite tests/interaction/testdata/*.txt from the actual output (review the diff)",
    )
