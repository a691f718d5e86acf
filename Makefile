# `make run` and `make test` set up everything on a fresh machine: a virtualenv with the
# project and its tools, and a redis-server binary when REDIS_URL does not name one.
# The interpreter the virtualenv is made from: scripts/pick-python says which and why
# (PYTHON=/path/to/python3 to choose another).
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell scripts/pick-python)
endif
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Which interpreter the virtualenv was made from: rewritten only when it changes, so that
# the virtualenv is made again (from scratch) then and only then.
PYTHON_CHOICE := build/python-choice

.PHONY: FORCE setup redis redis-binary test-tools compiled run test lint typecheck unit unit-pure bench clean

setup: $(STAMP) redis

$(PYTHON_CHOICE): FORCE
	@mkdir -p build
	@[ "$$(cat $@ 2>/dev/null)" = "$(PYTHON)" ] || echo "$(PYTHON)" >$@

$(STAMP): pyproject.toml $(PYTHON_CHOICE)
	$(PYTHON) -m venv --clear $(VENV)
	# setuptools 77 or later reads pyproject's license as written (the compiled build uses it).
	$(BIN)/python -m pip install -q --upgrade pip 'setuptools>=77'
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

# The move path compiled with mypyc where a C compiler is (core/build.py lists the
# modules; scripts/build-compiled), rebuilt when the engine, the protocol or one of the
# server's compiled modules changes.
COMPILED_SOURCES := $(wildcard core/*.py protocol/*.py) server/redis_io/resp_encode.py \
	server/room/view.py server/storage/codec.py server/live/frames.py
COMPILED_STAMP := build/compiled-stamp

compiled: $(COMPILED_STAMP)

$(COMPILED_STAMP): $(STAMP) $(COMPILED_SOURCES) scripts/build_compiled.py
	@scripts/build-compiled $(BIN)/python
	@touch $(COMPILED_STAMP)

run: setup compiled
	$(BIN)/python -m server $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Four workers on any machine: most of a test's time is spent waiting (on sockets, server
# processes, a race's clock), not computing, so four keep two cores busy. Each worker starts
# its own redis-server and PostgreSQL; tests go to whichever worker is free, except that a
# browser module's tests stay on one, for the module's one Chromium (tests/conftest.py's
# scheduler). PYTEST_WORKERS=0 runs in this process.
PYTEST_WORKERS ?= 4
unit: $(STAMP) redis-binary test-tools compiled
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# The tests of the compiled modules again on the pure-Python build of the move path: the
# engine's, the codec's, and the server's compiled modules'.
PURE_TESTS ?= tests/core tests/protocol/test_protocol.py tests/protocol/test_protocol_edges.py \
	tests/protocol/test_codec_pack.py tests/server/room/test_race.py tests/server/room/test_checklist.py \
	tests/server/room/test_view.py tests/server/storage/test_codec.py \
	tests/server/redis_io/test_resp_encode.py tests/server/live/test_frames.py
unit-pure: $(STAMP)
	SOLRACE_PURE_PYTHON=1 $(BIN)/python -m pytest -q $(PURE_TESTS)

test: setup lint typecheck unit unit-pure

# The race server against a bare aiohttp relay, each on its own redis-server/free port.
bench: setup redis-binary compiled
	$(BIN)/python -m bench.server $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis build
	rm -f core/*.so protocol/*.so server/*/*.so
