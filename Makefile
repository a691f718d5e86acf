# `make run` and `make test` set up everything on a fresh machine: a virtualenv with the
# project and its tools, and a redis-server binary when REDIS_URL does not name one.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup redis redis-binary test-tools run test lint typecheck unit bench clean

setup: $(STAMP) redis

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

redis:
	@scripts/ensure-redis-server

# The test suite always starts its own redis-server on a free port, REDIS_URL or not.
redis-binary:
	@SOLRACE_NEED_REDIS_BINARY=1 scripts/ensure-redis-server

# What the suite drives for real besides Redis: haproxy, nginx, chromium.
test-tools:
	@scripts/ensure-test-tools

run: setup
	$(BIN)/python -m server $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) redis-binary test-tools
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test: setup lint typecheck unit

# The race server against a bare aiohttp relay, each on its own redis-server/free port.
bench: setup redis-binary
	$(BIN)/python -m bench.server $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
