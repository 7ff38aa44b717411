# searchpulse — the two commands of the README are `make demo` and `make test`.
PYTHON ?= python3
PYTEST_ARGS ?=

.PHONY: all demo install setup test lint fmt generate bench bench-store bench-kafka kafka-up kafka-down help

help:
	@echo "make demo   - run the embedded default (simulated traffic → engine → :9464/metrics)"
	@echo "make test   - install what the tests need, start the services, run every test"
	@echo "make lint   - ruff"
	@echo "make generate - regenerate alert rules and Alertmanager config from alerts/config.py"
	@echo "make bench  - collector benchmark (results for docs/benchmarks.md)"
	@echo "make bench-store - per-query aggregates' cost and the feedback job on 10M rows"
	@echo "make bench-kafka - collect on a real broker vs raw kafka-python vs naive"
	@echo "make kafka-up / kafka-down - a local Apache Kafka broker (KRaft) from Maven jars"

all: fmt generate lint test

install:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e .

demo: install
	searchpulse demo

setup:
	scripts/setup.sh

test: setup lint
	$(PYTHON) -m pytest $(PYTEST_ARGS)

lint:
	$(PYTHON) -m ruff check .

fmt:
	$(PYTHON) -m ruff check --fix .

generate:  # committed artefacts; tests regenerate them and fail on any difference
	$(PYTHON) -m alerts.build
	$(PYTHON) -m dashboards.build

bench: install
	$(PYTHON) -m benchmarks.collector_bench --json benchmarks/results/collector.json

bench-store: install
	$(PYTHON) -m benchmarks.store_bench --json benchmarks/results/store.json

bench-kafka: install
	$(PYTHON) -m benchmarks.kafka_bench --json benchmarks/results/kafka.json

kafka-up:  # a local broker from Maven Central jars; the last line is bootstrap=HOST:PORT
	@$(PYTHON) -m testbed.kafka up

kafka-down:
	@$(PYTHON) -m testbed.kafka down
