# Every target runs inside .venv, created on first use from pyproject.toml (nothing else needs installing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The AWS SAM CLI, in a venv of its own: its pins (boto3, pydantic) differ from the project's.
SAM_CLI_VERSION := 1.170.0
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam

.PHONY: serve test lint typecheck unit contract integration bench load fuzz layer-reqs build deploy sam clean chromium

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11+ is required")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/notewell serve

# Debian's chromium for the consent-page browser tests (installed when missing and possible; see the script).
chromium:
	scripts/ensure-chromium

$(SAM):
	test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet aws-sam-cli==$(SAM_CLI_VERSION)
	touch $(SAM)

sam: $(SAM)

# The deploy preparation test (tests/integration/test_deploy_preparation.py) runs sam validate and sam build.
test: $(STAMP) chromium $(SAM)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

contract: $(STAMP)
	$(BIN)/python -m pytest tests/contract

integration: $(STAMP) chromium $(SAM)
	$(BIN)/python -m pytest tests/integration

bench: $(STAMP)
	$(BIN)/python -m tests.bench.run
	$(BIN)/python -m tests.bench.portability
	$(BIN)/python -m tests.bench.load --clients 4 --seconds 5
	$(BIN)/python -m tests.bench.freshness
	$(BIN)/python -m tests.bench.meaning
	$(BIN)/python -m tests.bench.admission
	$(BIN)/python -m tests.bench.retrieval
	$(BIN)/python -m tests.bench.sqlite_writers
	$(BIN)/python -m tests.bench.hooks
	$(BIN)/python -m tests.bench.freshness_anchors
	$(BIN)/python -m tests.bench.wire
	$(BIN)/python -m tests.bench.search_aws
	$(BIN)/python -m tests.bench.cold_start
	$(BIN)/python -m tests.bench.console

# N clients for T seconds of mixed reads and writes against `notewell serve` on loopback (tests/bench/load.py).
LOAD_CLIENTS ?= 8
LOAD_SECONDS ?= 20
load: $(STAMP)
	$(BIN)/python -m tests.bench.load --clients $(LOAD_CLIENTS) --seconds $(LOAD_SECONDS)

# 20 clients while 40 browsers ask for slow-hosted clients' consent pages (tests/bench/load.py --slow-documents).
.PHONY: load-slow-documents
load-slow-documents: $(STAMP)
	$(BIN)/python -m tests.bench.load --clients 20 --seconds 20 --slow-documents 40

# The schema-driven fuzz test at length (make test runs a bounded version): prints calls made and what it found.
fuzz: $(STAMP)
	$(BIN)/python -m tests.bench.fuzz

layer-reqs: $(STAMP)
	$(BIN)/python scripts/layer_reqs.py > layers/core/requirements.txt

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .mypy_cache .ruff_cache

build: $(SAM)
	SAM_CLI_TELEMETRY=0 $(SAM) build

# Guided (README: Deploy to AWS), unless DEPLOY_ARGS says otherwise, e.g. DEPLOY_ARGS="--no-confirm-changeset".
deploy: build
	SAM_CLI_TELEMETRY=0 $(SAM) deploy $(or $(DEPLOY_ARGS),--guided)

# Deletes the stack samconfig.toml names (or TEARDOWN_ARGS="--stack-name NAME --region R"): sam delete asks first.
# It keeps the notes table (DeletionPolicy Retain) and SAM's artifact bucket; README "Deleting the stack".
.PHONY: teardown
teardown: $(SAM)
	SAM_CLI_TELEMETRY=0 $(SAM) delete $(TEARDOWN_ARGS)
	@echo 'Kept: the notes table (deletion-protected by default) and the aws-sam-cli-managed-default bucket;'
	@echo 'README "Deleting the stack" says how to export the notes and delete the table.'
