"""Every controller scenario over seeds, with no violation; determinism; the scenarios do what
they say (ELR elections, snapshots, controlled shutdowns, fencing); regression seeds.

``--sim-seeds=N`` runs seeds 1..N of each scenario instead of 1..2. A failure prints the
reproduce command (``kraft sim run --scenario controller-... --seed S``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest

from kraft.cli.sim import main
from kraft.sim.controller_scenarios import CONTROLLER_SCENARIOS
from kraft.sim.runner import run_seed

# Two seeds per scenario in `make test` (three took 100 s of one worker, and the suite ran at its
# 15-minute budget); the breadth is the compiled sweeps' (`make sweep SCENARIOS=controller`: seeds
# 1..10000 of every controller scenario, docs/simulator.md).
DEFAULT_SEEDS = (1, 2)

# One worker runs this module (`--dist loadgroup`): the tests that read more figures of a seed
# get it from the worker's memo (``sim_run``) instead of running it again.
pytestmark = pytest.mark.xdist_group("controller-scenarios")

SimRun = Callable[..., dict[str, Any]]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "controller_seed" in metafunc.fixturenames:
        n = metafunc.config.getoption("--sim-seeds")
        seeds = DEFAULT_SEEDS if n is None else tuple(range(1, int(n) + 1))
        metafunc.parametrize("controller_seed", seeds)


def _clean(result: dict[str, Any]) -> dict[str, Any]:
    violations = result["violations"]
    assert not violations, f"{violations}\nreproduce: {result['reproduce']}"
    return result


@pytest.mark.parametrize("scenario", list(CONTROLLER_SCENARIOS))
def test_controller_scenario_keeps_every_invariant(
    scenario: str, controller_seed: int, sim_run: SimRun
) -> None:
    result = _clean(sim_run(scenario, controller_seed))
    figures = result["controller"]
    assert 3 <= figures["brokers"] <= 6
    assert figures["registrations"] >= figures["brokers"]
    assert figures["image_checks"] > 0 and figures["deep_checks"] >= 1
    assert figures["topics_created"] > 0


def test_every_controller_scenario_is_listed_and_named_controller() -> None:
    assert len(CONTROLLER_SCENARIOS) >= 10
    assert all(name.startswith("controller-") for name in CONTROLLER_SCENARIOS)


def test_same_seed_gives_the_same_trace_and_another_seed_does_not(sim_run: SimRun) -> None:
    first = sim_run("controller-flaky-network", 2)  # a CI seed's run, then a second run here
    second = run_seed("controller-flaky-network", 2)
    assert first["trace_hash"] == second["trace_hash"]
    assert first["controller"] == second["controller"]
    assert sim_run("controller-flaky-network", 3)["trace_hash"] != first["trace_hash"]


def _totals(sim_run: SimRun, scenario: str, seeds: tuple[int, ...]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for seed in seeds:
        for key, value in _clean(sim_run(scenario, seed))["controller"].items():
            totals[key] = totals.get(key, 0) + value
    return totals


def test_the_scenarios_exercise_what_they_name(sim_run: SimRun) -> None:
    elr = _totals(sim_run, "controller-elr", (1, 2))
    assert elr["elr_elections"] > 0 and elr["max_elr_size"] >= 1 and elr["fenced_brokers"] > 0
    snapshots = _totals(sim_run, "controller-snapshots", (1,))
    assert snapshots["snapshots_written"] > 0 and snapshots["snapshot_loads"] > 0
    shutdowns = _totals(sim_run, "controller-controlled-shutdown", (1,))
    assert shutdowns["controlled_shutdowns"] > 0 and shutdowns["broker_controlled_shutdowns_done"] > 0
    churn = _totals(sim_run, "controller-broker-churn", (1,))
    assert churn["unclean_registrations"] > 0 and churn["broker_restarts_clean"] > 0
    failover = sim_run("controller-failover", 1)
    # One activation at start and one per crash of the active controller (a restarted former
    # leader does not take itself for active).
    assert failover["crashes"] == 3 and failover["controller"]["activations"] == 4


# Found by the controller sweeps (unit tests: tests/unit/controller/test_regressions_from_sim.py):
# crash-restart 2: a commit dropped the active controller's uncommitted session-expiry fence (a
# timer write) from its latest image; a later request's image, adopted on commit, differed from the
# log (CommittedImageAgreement). failover 1: the restarted former leader took itself for active in
# its resigned epoch (ActiveControllerLeads).
@pytest.mark.parametrize("scenario, seed", [("controller-crash-restart", 2), ("controller-failover", 1)])
def test_regression_seeds(scenario: str, seed: int, sim_run: SimRun) -> None:
    _clean(sim_run(scenario, seed))


def test_the_cli_lists_runs_and_sweeps_controller_scenarios() -> None:
    out = io.StringIO()
    assert main(["list"], out) == 0
    assert all(name in out.getvalue() for name in CONTROLLER_SCENARIOS)
    out = io.StringIO()
    assert main(["run", "--scenario", "controller-steady", "--seed", "1"], out) == 0
    assert "controller: " in out.getvalue() and ": ok" in out.getvalue()
    out = io.StringIO()
    assert main(["sweep", "--scenario", "controller-steady", "--seeds", "1..2"], out) == 0
    assert "controller-steady" in out.getvalue() and "partition elections" in out.getvalue()
