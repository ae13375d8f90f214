"""``kraft sim run|sweep|list`` through ``main`` (no subprocesses)."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from kraft.cli.main import TOOLS
from kraft.cli.sim import main
from kraft.sim.disk import SimStore


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue()


def test_sim_is_registered_as_a_kraft_tool() -> None:
    assert TOOLS["sim"][0] == "kraft.cli.sim"


def test_run_json_has_the_documented_keys() -> None:
    code, text = _run(["run", "--scenario", "steady", "--seed", "3", "--json"])
    assert code == 0
    result = json.loads(text)
    for key in (
        "scenario",
        "seed",
        "violations",
        "elections",
        "max_epoch",
        "leader_changes",
        "high_watermark",
        "committed_records",
        "time_to_first_leader_ms",
        "unavailable_ms",
        "events",
    ):
        assert key in result, key
    assert result["scenario"] == "steady" and result["seed"] == 3 and result["violations"] == []


def test_run_text_summary_and_voter_override() -> None:
    code, text = _run(
        ["run", "--scenario", "steady", "--seed", "1", "--voters", "5", "--duration-ms", "4000"]
    )
    assert code == 0
    assert "scenario steady seed 1 (voters 5, observers 0, pre-vote on): ok" in text


def test_seven_voters_run_and_ten_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _run(["run", "--scenario", "leader-crash", "--seed", "2", "--voters", "7", "--json"])
    assert code == 0
    result = json.loads(text)
    assert result["voters"] == 7 and result["violations"] == []
    with pytest.raises(SystemExit) as refused:
        _run(["run", "--scenario", "steady", "--seed", "1", "--voters", "10"])
    assert refused.value.code == 2
    assert "invalid choice: 10" in capsys.readouterr().err


def test_unknown_scenario_is_an_error_naming_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run(["run", "--scenario", "nope", "--seed", "1"])
    assert code == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err


def test_sweep_prints_a_table_and_exits_zero_when_clean() -> None:
    code, text = _run(["sweep", "--scenario", "partition-rejoin", "--seeds", "1..2"])
    assert code == 0
    assert "partition-rejoin" in text and "majority epoch rose in 0/2 seeds" in text


def test_sweep_exits_non_zero_and_prints_reproduce_commands_on_violations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forgetful_write(self: Any, state: Any) -> None:
        return None

    monkeypatch.setattr(SimStore, "write", forgetful_write)
    code, text = _run(["sweep", "--scenario", "steady", "--seeds", "1..2"])
    assert code == 1
    assert "reproduce: kraft sim run --scenario steady --seed 1" in text
    assert "reproduce: kraft sim run --scenario steady --seed 2" in text


def test_bad_seed_range_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--scenario", "steady", "--seeds", "5..1"])
    assert "is empty" in capsys.readouterr().err


def test_a_sweep_keeps_the_simulated_nodes_log_lines_out_unless_asked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    argv = ["sweep", "--scenario", "controller-failover", "--seeds", "1..1"]
    assert _run(argv)[0] == 0
    assert [r.getMessage() for r in caplog.records if r.name.startswith("kraft.")] == []
    assert logging.getLogger("kraft").level == logging.NOTSET  # put back after the sweep
    assert _run([*argv, "--node-logs"])[0] == 0
    assert any("AlterPartition failed: no answer" in r.getMessage() for r in caplog.records)
