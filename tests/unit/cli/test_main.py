"""The ``kraft`` dispatcher: unknown tools, and a reader that closes the pipe early."""

from __future__ import annotations

import os
import subprocess
import sys

from kraft.cli.main import main


def test_unknown_tool_is_a_usage_error(capsys) -> None:
    assert main(["no-such-tool"]) == 2
    assert "unknown tool 'no-such-tool'" in capsys.readouterr().err


def test_closed_pipe_ends_quietly_without_a_traceback() -> None:
    # `kraft sim run ... | head -1`, with the reader gone before anything is written.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from kraft.cli.main import main; sys.exit(main())",
             "sim", "run", "--scenario", "steady", "--seed", "1", "--duration-ms", "2000", "--json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
