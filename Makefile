# Two commands on a fresh machine:  `make demo`  and  `make test`.
# torch is installed pinned first (override with TORCH_VERSION=...), so pip never resolves an
# unpinned torch (which would pull several GB of CUDA wheels).
PYTHON ?= python3
TORCH_VERSION ?= 2.13.0
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.repmode-installed

.PHONY: demo test bench install clean

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

bench: $(STAMP)
	$(PY) benchmarks/run.py --write BENCHMARKS.md

clean:
	rm -rf build $(VENV) repmode/*.so *.egg-info
