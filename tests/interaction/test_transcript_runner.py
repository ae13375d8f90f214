"""The runner itself (transcript.py), with an environment that echoes its commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript import Command, TranscriptError, parse_command, run_transcript


class Echo:
    def handle(self, command: Command) -> list[str]:
        if command.name == "quiet":
            return []
        return [f"{command.name} args={list(command.args)} options={command.options}"]


def test_arguments_positional_keyed_and_tuples() -> None:
    c = parse_command("add-nodes 3 voters=(1,2,3) fetch_timeout_ms=3000 1->2")
    assert (c.name, c.args) == ("add-nodes", ("3", "1->2"))
    assert c.opt_ints("voters") == [1, 2, 3] and c.opt_int("fetch_timeout_ms") == 3000
    assert c.opt_ints("missing") is None and c.opt_int("missing", 7) == 7


def test_a_matching_file_comes_back_unchanged_and_a_stale_block_is_replaced(tmp_path: Path) -> None:
    text = "# a comment\necho 1 k=v\n----\necho args=['1'] options={'k': 'v'}\n\nquiet\n----\nok\n"
    path = tmp_path / "t.txt"
    path.write_text(text)
    assert run_transcript(path, Echo) == (text, text)
    stale = text.replace("args=['1']", "args=['2']")
    path.write_text(stale)
    expected, actual = run_transcript(path, Echo)
    assert expected == stale and actual == text  # --rewrite writes ``actual``


def test_an_empty_expected_block_is_filled_in(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("echo\n----\n\n# end\n")
    _, actual = run_transcript(path, Echo)
    assert actual == "echo\n----\necho args=[] options={}\n\n# end\n"


def test_a_command_without_separator_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("echo\nnot a separator\n")
    with pytest.raises(TranscriptError, match="not followed by"):
        run_transcript(path, Echo)
