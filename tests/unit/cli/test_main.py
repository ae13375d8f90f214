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
            [
                sys.executable,
                "-c",
                "import sys; from kraft.cli.main import main; sys.exit(main())",
                "sim",
                "run",
                "--scenario",
                "steady",
                "--seed",
                "1",
                "--duration-ms",
                "2000",
                "--json",
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_the_server_and_the_tools_start_without_the_spark_extra() -> None:
    # kraft[spark] is optional: nothing but kraft.spark (and the commands that need it) may import it.
    import subprocess
    import sys

    code = (
        "import sys, kraft.cli.main, kraft.cli.sim, kraft.cli.analyze, kraft.server.kraft_server; "
        "heavy = {'pyspark', 'pyarrow', 'pandas', 'matplotlib'}; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
