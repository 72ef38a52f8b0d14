# Two entry points for a fresh machine: `make run` (the server only) and `make test` (everything).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# One stamp per install set: the server alone, the docs tools, and the whole development set.
SERVER := $(VENV)/.installed-server
DOCS := $(VENV)/.installed-docs
DEV := $(VENV)/.installed-dev

.PHONY: install chromium brokers run test lint docs bench bench-load screenshot clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The lean server: onnxruntime, tokenizers, faiss, FastAPI and psycopg; no torch.
$(SERVER): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(DOCS): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@

$(DEV): pyproject.toml client/pyproject.toml | $(BIN)/python
	# torch first and pinned: the local CPU wheel, not gigabytes of CUDA.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# The light client distribution, with the SDKs its integrations hook into.
	$(BIN)/pip install --quiet -e './client[mcp,openai-agents,langchain,redis,rabbitmq,nats]'
	# mypy cannot follow setuptools' editable import hook: it reads this link tree instead.
	mkdir -p $(VENV)/typecheck/tooldedup
	for d in dedup index api calibration; do ln -sfn $(CURDIR)/$$d $(VENV)/typecheck/tooldedup/$$d; done
	# The development set holds the other two.
	touch $@ $(SERVER) $(DOCS)

install: $(DEV)

run: $(SERVER)
	$(BIN)/tooldedup serve $(ARGS)

# The review page's tests drive Debian's Chromium: a package, never a browser download.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The consumer tests start their own Redis, RabbitMQ and NATS: Debian's packages, no service.
brokers:
	@command -v redis-server >/dev/null 2>&1 && command -v nats-server >/dev/null 2>&1 && \
		test -x /usr/lib/rabbitmq/bin/rabbitmq-server || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			redis-server rabbitmq-server nats-server >/dev/null; }

# Hypothesis keeps its caches outside the checkout.
test: $(DEV) chromium brokers
	HYPOTHESIS_STORAGE_DIRECTORY=$${TMPDIR:-/tmp}/tooldedup-hypothesis $(BIN)/python -m pytest $(ARGS)

# The documentation site, into site/; a broken link or a missing page fails the build.
docs: $(DOCS)
	$(BIN)/mkdocs build --strict

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(DEV)
	$(BIN)/python -m pytest benchmarks --benchmark-only -p no:cacheprovider $(ARGS)

# The HTTP load benchmark with GPTCache beside it (about 40 minutes on 2 cores).
bench-load: $(DEV)
	$(BIN)/python -m benchmarks.load $(ARGS)

# The docs' picture of the review page, taken by its browser test.
screenshot: $(DEV) chromium
	TOOLDEDUP_SCREENSHOT=$(CURDIR)/docs/review-page.png $(BIN)/python -m pytest -q \
		-p no:cacheprovider tests/test_ui.py -k label

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis
