# Two commands on a fresh machine:  `make demo`  and  `make test`.
# torch is installed pinned first (override with TORCH_VERSION=...), so pip never resolves an
# unpinned torch (which would pull several GB of CUDA wheels).
PYTHON ?= python3
TORCH_VERSION ?= 2.13.0
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.repmode-installed

.PHONY: demo test lint bench install clean wheel package-check

$(STAMP): pyproject.toml setup.py $(shell find csrc -name '*.h' -o -name '*.cpp' -o -name '*.def' 2>/dev/null)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "torch==$(TORCH_VERSION)"
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) examples/train_mlp.py

test: $(STAMP)
	$(PY) -m pytest -q

# Python: ruff (pyflakes, pycodestyle, import order; pyproject.toml). C++/CUDA: clang-format (.clang-format).
CXX_SOURCES = $(shell find csrc tests/cuda/emulator -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh')

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	@$(VENV)/bin/clang-format --dry-run -Werror $(CXX_SOURCES) && \
		echo "clang-format: $(words $(CXX_SOURCES)) C++/CUDA files formatted"

# The sdist and the wheel built FROM it (python -m build does both) into dist/. The CPU extension
# only unless REPMODE_CUDA=1 (see setup.py). The wheel keeps its linux_x86_64 tag: `auditwheel
# repair` would vendor a renamed libgomp into it, and repmode._C must bind the libgomp.so.1 that
# torch has already loaded (one OpenMP thread pool for both; repmode/_ext.py), so it is not run.
wheel: $(STAMP)
	$(PY) -m build --outdir dist .

# CI's packaging step: sdist -> wheel -> fresh virtual environment with torch==$(TORCH_VERSION) ->
# smoke test from a folder outside the checkout (.ci/package_smoke.sh; about 4 minutes on 2 cores).
package-check: $(STAMP)
	PYTHON=$(PYTHON) TORCH_VERSION=$(TORCH_VERSION) SOURCE_PY=$(PY) .ci/package_smoke.sh

bench: $(STAMP)
	$(PY) benchmarks/run.py --write BENCHMARKS.md

clean:
	rm -rf build dist $(VENV) repmode/*.so *.egg-info repmode/tools/order_summaries.json
