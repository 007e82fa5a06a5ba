"""Every CUDA source under csrc/ compiles with nvcc, so shared headers never rot unseen."""
from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUDA_SOURCES = sorted((ROOT / "csrc").rglob("*.cu"))
NVCC_FLAGS = ["-std=c++17", "--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true"]


def test_there_are_cuda_sources():
    assert CUDA_SOURCES, "csrc/ should hold at least the shared-header compile check"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH")
@pytest.mark.parametrize("source", CUDA_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_compiles_with_nvcc(source, tmp_path):
    result = subprocess.run(
        ["nvcc", "-c", *NVCC_FLAGS, str(source), "-o", str(tmp_path / "out.o")],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
