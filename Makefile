# searchpulse — the two commands of the README are `make demo` and `make test`.
# Everything runs in a project-local virtual environment (.venv, made by the first target that
# needs it from BOOTSTRAP_PYTHON): a package installed by hand on the machine can hide nothing.
BOOTSTRAP_PYTHON ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: all demo install install-test setup test check lint fmt generate bench bench-store bench-kafka bench-judged \
	bench-interleaving bench-clicks bench-experiments bench-privacy bench-replay-store \
	bench-shutdown bench-time bench-replay-cpu bench-workers \
	kafka-up kafka-down help

help:
	@echo "make demo   - run the embedded default (simulated traffic → engine → :9464/metrics)"
	@echo "make test   - install what the tests need, start the services, run every test"
	@echo "make check  - lint and the service-free tests on 2 workers (~800, ~80 s of CPU; no services)"
	@echo "make lint   - ruff, deptry (every import declared) and pint on the generated rules"
	@echo "make generate - regenerate alert rules, Alertmanager config and dashboards"
	@echo "make bench  - collector benchmark (results for docs/benchmarks.md)"
	@echo "make bench-store - per-query aggregates' cost and the feedback job on 10M rows"
	@echo "make bench-replay-store - replay into a store: throughput, positions per flush (AGAINST=DIR)"
	@echo "make bench-shutdown - collect's SIGTERM-to-exit with no broker / a killed one (AGAINST=DIR)"
	@echo "make bench-time - replay cost by traffic shape: dense, sparse, nights, lulls, skewed, front_ends (AGAINST=DIR, CPU=1)"
	@echo "make bench-replay-cpu - CPU time of searchpulse replay against another checkout (AGAINST=DIR;"
	@echo "    INSTRUCTIONS=1: instructions under callgrind instead; LOG=FILE another log)"
	@echo "make bench-workers - replay --workers 1 and 2 against one engine: wall, CPU, stages (AGAINST=DIR)"
	@echo "make bench-judged - live judged scoring's cost; evaluate on 100k queries x 2 runs"
	@echo "make bench-interleaving - searches interleaving vs A/B need to detect a preference"
	@echo "make bench-clicks - the click model's curve error against traffic, fit time"
	@echo "make bench-experiments - calibration of the experiment verdicts (A/A, A/B)"
	@echo "make bench-kafka - collect on a real broker vs raw kafka-python vs naive"
	@echo "make bench-privacy - new query text at the caps per scrape; basic auth under attack"
	@echo "make kafka-up / kafka-down - a local Apache Kafka broker (KRaft) from Maven jars"

all: fmt generate lint test

$(PYTHON):
	$(BOOTSTRAP_PYTHON) -m venv $(VENV)

install: $(PYTHON)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e .

install-test: $(VENV)/.installed-test

# the package with the test and lint tools (ruff, deptry, pytest), again when pyproject.toml
# changes (pip takes 4 s even with nothing to do: a third of an idle `make check`'s lint)
$(VENV)/.installed-test: pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e ".[test]"
	touch $@

demo: install
	$(VENV)/bin/searchpulse demo

setup: $(PYTHON)
	PYTHON=$(PYTHON) scripts/setup.sh

# Every test on TEST_WORKERS processes (pytest-xdist; each worker starts the services its tests
# need on free ports). Most of the suite's time is waiting (brokers, promtool, timed traffic):
# two workers on two cores save about a third of it (docs/benchmarks.md, "The test suite on
# two workers").
TEST_WORKERS ?= 2
test: setup lint
	$(PYTHON) -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)

# The service-free tests on CHECK_WORKERS processes (pytest-xdist); tests marked `slow`
# (subprocess waits, long simulations: tens of seconds together) run in `make test` only.
CHECK_WORKERS ?= 2
check: install-test
	$(PYTHON) -m ruff check .
	$(PYTHON) -m deptry .
	$(PYTHON) -m pytest -m "not integration and not slow" -n $(CHECK_WORKERS) $(PYTEST_ARGS)

lint: install-test
	$(PYTHON) -m ruff check .
	$(PYTHON) -m deptry .
	scripts/pint.sh lint alerts/generated/searchpulse-rules.yml

fmt: install-test
	$(PYTHON) -m ruff check --fix .

generate: install  # committed artefacts; tests regenerate them and fail on any difference
	$(VENV)/bin/searchpulse generate --out alerts/generated --dashboards-out dashboards/generated

bench: install
	$(PYTHON) -m benchmarks.collector_bench --json benchmarks/results/collector.json

bench-store: install
	$(PYTHON) -m benchmarks.store_bench --json benchmarks/results/store.json

bench-replay-store: install
	$(PYTHON) -m benchmarks.replay_store_bench $(if $(AGAINST),--against $(AGAINST)) \
		--json benchmarks/results/replay-store.json

bench-shutdown: install
	$(PYTHON) -m benchmarks.shutdown_bench $(if $(AGAINST),--against $(AGAINST)) \
		--json benchmarks/results/shutdown.json

bench-time: install
	$(PYTHON) -m benchmarks.stream_time_bench $(if $(AGAINST),--against $(AGAINST)) \
		$(if $(CPU),--cpu) --json benchmarks/results/stream-time.json

# INSTRUCTIONS=1: a count the machine's load does not move (valgrind; ~3 min per checkout for
# 60,000 simulated records)
bench-replay-cpu: install
	$(PYTHON) -m benchmarks.replay_cpu_bench --against $(AGAINST) \
		$(if $(INSTRUCTIONS),--instructions) $(if $(LOG),--log $(LOG)) \
		--json benchmarks/results/replay-$(if $(INSTRUCTIONS),instructions,cpu).json

bench-workers: install
	$(PYTHON) -m benchmarks.replay_workers_bench $(if $(AGAINST),--against $(AGAINST)) \
		--json benchmarks/results/replay-workers.json

bench-judged: install
	$(PYTHON) -m benchmarks.judged_bench --json benchmarks/results/judged.json

bench-interleaving: install
	$(PYTHON) -m benchmarks.interleaving_bench --json benchmarks/results/interleaving.json

bench-clicks: install
	$(PYTHON) -m benchmarks.click_model_bench --json benchmarks/results/click_model.json

bench-experiments: install
	$(PYTHON) -m benchmarks.experiments_bench --workers 2 --json benchmarks/results/experiments.json

bench-privacy: install
	$(PYTHON) -m benchmarks.privacy_bench --json benchmarks/results/privacy.json
	$(PYTHON) -m benchmarks.auth_bench --json benchmarks/results/auth.json

bench-kafka: install
	$(PYTHON) -m benchmarks.kafka_bench --json benchmarks/results/kafka.json

kafka-up: install  # a local broker from Maven Central jars; the last line is bootstrap=HOST:PORT
	@$(PYTHON) -m testbed.kafka up

kafka-down: install
	@$(PYTHON) -m testbed.kafka down
