"""A bounded subset of the CUDA tests (tests/cuda) run against the host emulation of the CUDA
kernels (tests/cuda/emulator; docs/cuda.md, "Emulated runs"), so a machine without a GPU checks
the kernels' indexing, partitioning, shared-memory and warp logic on every run. Not a GPU run.
The full emulated run is `python tests/cuda/emulate.py`.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repmode._ext import codes as _ext_codes

ROOT = Path(__file__).resolve().parents[2]
CUDA_TESTS = ROOT / "tests" / "cuda"

# Every kernel file, through its cheaper tests (the whole of tests/cuda takes far longer here;
# `python tests/cuda/emulate.py` runs it). See docs/cuda.md for the measured time.
SUBSET = [
    "tests/cuda/test_cuda_gemm.py::test_float32_tiles",
    "tests/cuda/test_cuda_gemm.py::test_negative_zero_through_the_last_k_tile",
    "tests/cuda/test_cuda_gemm.py::test_sums_of_several_groups[16385-dtype0]",  # split k over groups
    "tests/cuda/test_cuda_gemm.py::test_split_k_for_few_tiles[513-dtype1]",
    "tests/cuda/test_cuda_gemm.py::test_unsplit_k_with_many_tiles[dtype0]",  # the totals in scratch
    "tests/cuda/test_cuda_gemm.py::test_short_float32_sums_round_once[32]",  # float64, rounded once
    "tests/cuda/test_cuda_elementwise.py::test_elementwise_flat",
    "tests/cuda/test_cuda_elementwise.py::test_elementwise_transposed",
    "tests/cuda/test_cuda_elementwise.py::test_random_ints",
    "tests/cuda/test_cuda_elementwise.py::test_cumulative",
    "tests/cuda/test_cuda_norms.py::test_group_norm",
    "tests/cuda/test_cuda_norms.py::test_lstm_steps",
    "tests/cuda/test_cuda_conv_pool.py::test_conv_forward_and_grad_input",
    "tests/cuda/test_cuda_conv_pool.py::test_pool_forward_and_backward",
    "tests/cuda/test_cuda_reduce.py::test_extreme_ties",
    "tests/cuda/test_cuda_reduce.py::test_sum_many_rows_layouts",
    "tests/cuda/test_cuda_softmax_loss.py::test_softmax",
    "tests/cuda/test_cuda_softmax_loss.py::test_nll_loss_forward",
    "tests/cuda/test_cuda_ctc.py::test_ctc_forward_and_backward[False-False-False-dtype0]",
]
_EW_CODES = _ext_codes("EwOp")
# The elementwise codes from 51 on (copysign ... atanh) leave the emulated subset: the emulator checks
# the kernels' indexing and partitioning, which codes 0-50 exercise on every layout already; each
# code's formula is csrc/common code shared with the CPU, and all of them run on a GPU in tests/cuda.
_LATER_CODES = sorted(code for code in _EW_CODES.values() if code >= 51)
# (one argument, "-k<expr>": emulate.pytest_command looks for test paths among the separate ones)
SUBSET_FILTER: list[str] = ["-knot (" + " or ".join(f"op{code}-" for code in _LATER_CODES) + ")"]


def _why_not() -> str | None:
    if shutil.which("g++") is None:
        return "the CUDA emulator needs g++"
    if importlib.util.find_spec("pybind11") is None:
        return "the CUDA emulator needs the pybind11 headers (pip package pybind11)"
    return None


@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
def test_cuda_kernels_emulated_subset(tmp_path_factory):
    sys.path.insert(0, str(CUDA_TESTS))
    sys.path.insert(0, str(CUDA_TESTS / "emulator"))
    try:
        import build
        import emulate
    finally:
        sys.path[:2] = []
    module_dir = build.build(verbose=False)  # cached under build/cuda-emulated
    cmd = emulate.pytest_command(["-q", "-p", "no:cacheprovider", *SUBSET_FILTER, *SUBSET])
    r = subprocess.run(cmd, cwd=ROOT, env=emulate.environment(module_dir), capture_output=True, text=True)
    tail = (r.stdout + r.stderr)[-4000:]
    assert r.returncode == 0, f"emulated CUDA tests failed:\n{tail}"
    assert " passed" in tail, tail
