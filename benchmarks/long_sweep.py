"""Long simulator sweeps (thousands of seeds per scenario) on a mypyc-compiled build, audited.

Interpreted, a raft scenario's run costs about 0.2-0.6 CPU-s and a controller scenario's about 0.3-1,
so 10,000 seeds of every scenario is many CPU-hours. mypyc (it ships with mypy, a dev dependency)
compiles the same source of ``kraft.raft``, ``kraft.sim``, ``kraft.controller``, ``kraft.metadata``,
``kraft.records`` and ``kraft.protocol`` (its primitives, not the generated message classes) to C
extensions, 2-2.5 times as fast. A compiled build must run exactly what the source says, so every
sweep ends with an audit: a random sample of the swept seeds is re-run on the interpreter, and
every field of each result (trace hash, violations, elections, epochs, high watermark,
unavailability, message counts) must be equal.

    .venv/bin/python benchmarks/long_sweep.py --scenarios all --seeds 2501..10000 --out sweeps/
    .venv/bin/python benchmarks/long_sweep.py --scenarios controller --seeds 1..2000 --out sweeps/
    .venv/bin/python benchmarks/long_sweep.py --audit-only --out sweeps/   # re-audit saved runs

``--scenarios`` takes names and the groups ``all``, ``raft``, ``controller`` (the controller
simulation's ``controller-*`` scenarios) and ``data`` (the data plane's ``data-*``). Those also run
the quorum controller and the brokers (``kraft.broker``, ``kraft.storage``, ``kraft.node``, compiled
since 2026-11-29: a data scenario's run then takes 0.8-1.0 s instead of 1.0-1.2 with them
interpreted and 1.3-1.7 with nothing compiled), all compiled except the few modules mypyc cannot
take (``NOT_COMPILED``); docs/simulator.md has the figures.

Each scenario's runs go to ``OUT/<scenario>.json`` (the ``kraft sim sweep --json`` document), or
with ``--chunk N`` to one file per N seeds (``OUT/<scenario>.<A>-<B>.json``), so that a sweep that
is stopped keeps its finished chunks; a file that exists is not run again, and the summary and the
audit read every file of a scenario. Exit status is non-zero on any violation or any
audit mismatch. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"

# Kept interpreted (package-relative paths): SimLog rebinds its read methods per instance (an
# interpreter-only speed-up that compiled classes, having no __dict__, refuse); __main__ is only an
# entry point; a compiled frozen generic ControllerResult fails at import ("attribute '__dict__' of
# 'type' objects is not writable"); ControllerMetrics, which reads its own __slots__, is off the hot
# path and not tried; the generated message classes subclass schema.py's StructValue at run time,
# which a compiled (native) base class would refuse, and mypyc rejects its TYPE_CHECKING-only body.
NOT_COMPILED = {
    "sim/disk.py",
    "sim/__main__.py",
    "controller/result.py",
    "controller/metrics.py",
    "protocol/schema.py",
    # mypyc fails at import on its frozen dataclasses with ``object`` fields (KeyError: 'object').
    "protocol/envelope.py",
}
# Compiled module by module (kraft.raft, small and clean, as one package).
COMPILED_PACKAGES = ("sim", "controller", "metadata", "records", "protocol", "broker", "storage", "node")

# Fields that depend on the machine, not on the run.
NOT_COMPARED = {"wall_s"}


def compiled_modules(package_dir: Path) -> list[Path]:
    """The modules of ``COMPILED_PACKAGES`` the build compiles one by one, under ``package_dir`` (a
    ``kraft`` package directory); ``kraft.raft`` is compiled besides, as one package."""
    return [
        path
        for package in COMPILED_PACKAGES
        for path in sorted((package_dir / package).glob("*.py"))
        if f"{package}/{path.name}" not in NOT_COMPILED
    ]


def build(build_dir: Path) -> None:
    """Copy ``src/kraft`` to ``build_dir`` and compile its consensus core and simulator there."""
    try:
        import setuptools  # noqa: F401  (mypyc builds through it; venvs of Python 3.12+ lack it)
    except ModuleNotFoundError:
        raise SystemExit("mypyc needs setuptools: .venv/bin/pip install setuptools") from None
    shutil.copytree(SRC / "kraft", build_dir / "kraft", ignore=shutil.ignore_patterns("__pycache__"))
    # mypyc builds through setuptools from the current directory: no pyproject.toml there.
    (build_dir / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n")
    targets = ["kraft/raft"] + [
        path.relative_to(build_dir).as_posix() for path in compiled_modules(build_dir / "kraft")
    ]
    mypyc = [sys.executable, "-c", "import sys; from mypyc.__main__ import main; sys.exit(main())"]
    started = time.perf_counter()
    subprocess.run(
        [*mypyc, "--config-file", "mypy.ini", *targets],
        cwd=build_dir,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    # Import what a sweep runs (every scenario's world) and what a server process runs on the build
    # (the node), so that a module the compiled build cannot load fails here, not in the first
    # chunk: a dataclass mypyc gave a comparison slot did, and one with an ``object`` field.
    probe_code = (
        "import kraft.sim.scenarios, kraft.sim.controller_scenarios, kraft.sim.data_scenarios; "
        "import kraft.node.build, kraft.server.kraft_server; "
        "import kraft.raft.node as n; print(n.__file__)"
    )
    probe = subprocess.run(
        [sys.executable, "-c", probe_code],
        env=_compiled_env(build_dir),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not probe.endswith(".so"):
        raise SystemExit(f"the compiled build is not the one imported: {probe}")
    took = time.perf_counter() - started
    print(f"built {len(targets)} targets with mypyc in {took:.0f} s", file=sys.stderr)


def _compiled_env(build_dir: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(build_dir)}


def sweep(build_dir: Path, scenario: str, seeds: str, workers: int, out: Path) -> float:
    """Run one scenario's sweep on the compiled build; return its wall seconds."""
    started = time.perf_counter()
    partial = out.with_suffix(".json.partial")
    kraft = [sys.executable, "-c", "import sys; from kraft.cli.main import main; sys.exit(main())"]
    command = [*kraft, "sim", "sweep", "--scenario", scenario, "--seeds", seeds, "--json"]
    with partial.open("w") as sink:
        code = subprocess.run(
            [*command, "--workers", str(workers)], env=_compiled_env(build_dir), stdout=sink
        ).returncode
    if code not in (0, 1):  # 1 means violations: keep the file, the summary reports them
        raise SystemExit(f"{scenario}: sweep failed with exit status {code}")
    # A crash (a traceback) also exits with 1, leaving no document: never save that as results.
    try:
        json.loads(partial.read_text())["runs"]
    except (ValueError, KeyError, TypeError):
        raise SystemExit(f"{scenario} {seeds}: the sweep crashed (exit {code}; its error is above)") from None
    partial.rename(out)
    return time.perf_counter() - started


def _targets(out: Path, name: str, seeds: str, chunk: int) -> list[tuple[str, Path]]:
    """(seeds, file) to sweep for ``name``: the whole range in OUT/<name>.json, or chunks of
    ``chunk`` seeds, each in OUT/<name>.<A>-<B>.json."""
    if chunk <= 0:
        return [(seeds, out / f"{name}.json")]
    first, last = (int(x) for x in seeds.split(".."))
    return [
        (f"{a}..{min(a + chunk - 1, last)}", out / f"{name}.{a}-{min(a + chunk - 1, last)}.json")
        for a in range(first, last + 1, chunk)
    ]


def audit(document: dict[str, Any], sample: int, rng: random.Random) -> tuple[int, list[str]]:
    """Re-run ``sample`` of the document's seeds interpreted; return (checked, mismatches)."""
    # The interpreted source of this tree (not whichever kraft the venv has installed: a worktree's
    # sweep must be audited against its own code). This process never has the build on its path.
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    from kraft.sim.runner import run_seed

    runs = document["runs"]
    mismatches = []
    chosen = rng.sample(runs, min(sample, len(runs)))
    for compiled in chosen:
        result = run_seed(compiled["scenario"], compiled["seed"], pre_vote=compiled["pre_vote"])
        interpreted = json.loads(json.dumps(result))  # as saved: tuples become lists
        for key in sorted(set(compiled) | set(interpreted)):
            if key in NOT_COMPARED:
                continue
            if compiled.get(key) != interpreted.get(key):
                mismatches.append(
                    f"{compiled['scenario']} seed {compiled['seed']}: {key} compiled={compiled.get(key)!r} "
                    f"interpreted={interpreted.get(key)!r}"
                )
    return len(chosen), mismatches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenarios", default="all", help="comma-separated names or groups (all, raft, controller, data)"
    )
    parser.add_argument("--seeds", default="1..10000", help="A..B inclusive")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=Path("sweeps"))
    parser.add_argument("--audit", type=int, default=20, help="seeds per scenario re-run interpreted")
    parser.add_argument("--audit-only", action="store_true", help="only audit the files already in --out")
    parser.add_argument("--build-dir", type=Path, help="reuse (or keep) a compiled build here")
    parser.add_argument(
        "--chunk",
        type=int,
        default=0,
        help="save every N seeds of a scenario as its own file (OUT/<scenario>.<A>-<B>.json), so that "
        "a sweep stopped midway keeps its finished chunks and a rerun does only the rest",
    )
    args = parser.parse_args()

    if os.environ.get("PYTHONPATH"):
        raise SystemExit("run without PYTHONPATH: the audit must import the interpreted source")
    from kraft.sim.scenarios import scenario_group

    # Each comma-separated part: a scenario, or a group (all, raft, controller).
    names = [name for part in args.scenarios.split(",") for name in scenario_group(part.strip())]
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.audit_only:
        with tempfile.TemporaryDirectory(prefix="kraft-mypyc-") as scratch:
            build_dir = args.build_dir or Path(scratch)
            if not (build_dir / "kraft" / "raft").exists():
                build(build_dir)
            for name in names:
                for seeds, target in _targets(args.out, name, args.seeds, args.chunk):
                    if target.exists():
                        print(f"{name}: {target} exists, not run again", file=sys.stderr)
                        continue
                    wall = sweep(build_dir, name, seeds, args.workers, target)
                    print(f"{name}: swept {seeds} in {wall:.0f} s", file=sys.stderr)

    rng = random.Random(20261121)
    failed = False
    heads = (
        ("seeds", 6),
        ("first..last", 12),
        ("missing", 7),
        ("violations", 10),
        ("audited", 8),
        ("mismatches", 10),
    )
    print(f"{'scenario':20}" + "".join(f" {head:>{width}}" for head, width in heads))
    for name in names:
        files = sorted(args.out.glob(f"{name}.json")) + sorted(args.out.glob(f"{name}.*-*.json"))
        if not files:
            print(f"{name:20} (no results)")
            failed = True
            continue
        # Every saved file of the scenario (whole or chunks), as one document.
        runs = [run for path in files for run in json.loads(path.read_text())["runs"]]
        document = {"runs": runs}
        swept = sorted(run["seed"] for run in runs)
        violations = sum(len(run["violations"]) for run in runs)
        checked, mismatches = audit(document, args.audit, rng)
        span = f"{swept[0]}..{swept[-1]}" if swept else "-"
        # Seeds inside first..last that no saved chunk holds (a chunk not run yet, or lost).
        missing = swept[-1] - swept[0] + 1 - len(set(swept)) if swept else 0
        print(
            f"{name:20} {len(runs):>6} {span:>12} {missing:>7} {violations:>10} {checked:>8} "
            f"{len(mismatches):>10}"
        )
        for line in mismatches[:5]:
            print(f"  {line}")
        failed |= bool(violations or mismatches)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
