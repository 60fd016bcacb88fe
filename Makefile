# Two commands do all set-up on a fresh machine (Python 3.11+ with pip and venv):
#   make serve   install into .venv, then serve the example echo agent on 127.0.0.1:9999
#   make test    install into .venv, then run lint, type checks and the whole test suite
# and, when wanted, make bench: ours against the official a2a-sdk (about five minutes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 9999
AGENT ?= examples.echo:agent
CARD ?= examples.echo:card

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

.PHONY: install serve test lint docs bench
install: $(STAMP)

serve: $(STAMP)
	$(BIN)/python -m a2a_adapters serve $(AGENT) --card $(CARD) --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

docs: $(STAMP)
	$(BIN)/python docs/generate.py

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run
