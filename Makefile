# Two commands on a fresh machine:  `make demo`  and  `make test`.
# torch is installed pinned first (override with TORCH_VERSION=...), so pip never resolves an
# unpinned torch (which would pull several GB of CUDA wheels).
PYTHON ?= python3
TORCH_VERSION ?= 2.13.0
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.repmode-installed

.PHONY: demo test lint bench install clean

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

bench: $(STAMP)
	$(PY) benchmarks/run.py --write BENCHMARKS.md

clean:
	rm -rf build $(VENV) repmode/*.so *.egg-info
