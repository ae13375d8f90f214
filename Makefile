# kraft: two commands matter — `make run` and `make test`. Both set up .venv when it is missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# The C record decoder (setup.py builds it in place next to its source; optional: without a
# compiler kraft falls back to pure Python and the test suite says so).
NATIVE_SRC := src/kraft/records/_native_decode.c

.PHONY: run test test-fast lint bench bench-dataplane sweep jepsen clean setup jvm kcat

setup: $(STAMP) jvm

$(STAMP): pyproject.toml setup.py $(NATIVE_SRC)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,fast,spark]'
	@$(MAKE) --no-print-directory kcat
	@touch $(STAMP)

## kcat (a librdkafka CLI some data-plane tests use): installed from the system packages where that
## is possible (root or password-less sudo, apt-get); elsewhere those tests skip and say why.
kcat:
	@command -v kcat >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi; \
	    if [ "$$SUDO" != none ]; then \
	      $$SUDO apt-get install -y -q kcat >/dev/null 2>&1 || \
	      { $$SUDO apt-get update -q >/dev/null 2>&1 && $$SUDO apt-get install -y -q kcat >/dev/null 2>&1; } || true; \
	    fi; \
	  fi; \
	  command -v kcat >/dev/null 2>&1 && echo "kcat installed" || echo "kcat not installed: its tests will skip"; }

## The JVM half of the Spark source (kraft.spark.jvm): Java compiled against PySpark's own jars,
## rebuilt when its sources change; skipped, with a message, where there is no JDK.
jvm: $(STAMP)
	@$(PY) -m kraft.spark.jvm build --if-possible

## Start the embedded default: 3 controllers and 3 brokers with data under ./data, a demo topic
## (replication factor 3), and show the quorum, the topic, and how to produce and consume it
## (kraft console-producer/console-consumer/get-offsets and kcat, with the brokers' addresses).
run: $(STAMP) jvm
	$(VENV)/bin/kraft cluster up --controllers 3 --brokers 3 --data-dir ./data --create-topic demo:3:3

## The whole suite (unit, golden, transcripts, simulator, process-level, Spark) over every core
## (pytest-xdist); the Spark tests stay on one worker (one SparkSession: `xdist_group("spark")`).
## One worker per core: a third worker on two cores (tried 2026-11-28) made the run slower (16:41 of
## tests against 14-14.7 min), its process-level clusters crowding each other into timeouts.
PYTEST_WORKERS ?= auto
test: $(STAMP) jvm
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

## Everything but the process-level and Spark tests.
test-fast: $(STAMP) jvm
	$(PY) -m pytest -m "not slow and not spark" -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP) jvm
	$(PY) benchmarks/bench_codec.py
	$(PY) benchmarks/bench_log.py
	$(PY) benchmarks/bench_sim.py
	$(PY) benchmarks/bench_quorum.py
	$(PY) benchmarks/bench_controller.py
	$(PY) benchmarks/bench_brokers.py
	$(PY) benchmarks/bench_spark_source.py

## The data plane on real processes (3 controllers + 3 brokers, confluent-kafka, acks=all): produce
## and consume throughput, produce and end-to-end latency, next to the machine's file-write and
## loopback TCP throughput for the same bytes. BENCH_ARGS: e.g. --quick, --json OUT, --profile OUT.prof.
BENCH_ARGS ?=
bench-dataplane: $(STAMP)
	$(PY) benchmarks/bench_dataplane.py $(BENCH_ARGS)

## Long simulator sweeps on a mypyc-compiled build, audited against the interpreter (hours).
SEEDS ?= 1..10000
SCENARIOS ?= all
CHUNK ?= 500
sweep: $(STAMP)
	$(PY) benchmarks/long_sweep.py --scenarios $(SCENARIOS) --seeds $(SEEDS) --chunk $(CHUNK) --out sweeps

## A Jepsen-style check of the data plane on real processes (3 controllers + 3 brokers, real
## clients, kill -9 / SIGSTOP / restarts for JEPSEN_SECONDS): a table on stdout, the results and the
## whole history under benchmarks/results/; exits non-zero on a lost write, a duplicate, an
## inconsistent offset, a non-monotonic read or an acknowledged offset mismatch.
## JEPSEN_ARGS: e.g. --seed 42 --harsh --producers 5 --idempotence.
JEPSEN_SECONDS ?= 300
JEPSEN_ARGS ?=
jepsen: $(STAMP)
	$(PY) benchmarks/jepsen_dataplane.py --seconds $(JEPSEN_SECONDS) \
		--json benchmarks/results/jepsen.json --history benchmarks/results/jepsen-history.json $(JEPSEN_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build src/*.egg-info
	rm -f src/kraft/records/_native_decode.*.so src/kraft/records/_native_decode.*.pyd
	rm -f src/kraft/spark/jvm/kraft-spark.jar
