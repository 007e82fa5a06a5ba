"""Shared helpers of the CUDA tests (tests/cuda/): every test there compares repmode's CUDA kernels
with its CPU kernels bit for bit, and is skipped on a machine without a GPU and a build of
repmode._C_cuda (docs/cuda.md).

A test module starts with ``pytestmark = needs_cuda``.
"""
from __future__ import annotations

import pytest
import torch

from repmode import _ext


def cuda_ready() -> bool:
    return _ext.CUDA is not None and torch.cuda.is_available() and _ext.CUDA.device_count() > 0


needs_cuda = pytest.mark.skipif(
    not cuda_ready(),
    reason="needs a GPU, a CUDA build of torch and repmode._C_cuda (REPMODE_CUDA=1 pip install "
           "--no-build-isolation --no-deps -e .)")

# For tests of whole ops on real CUDA tensors (the mode's device dispatch): the host emulator
# (tests/cuda/emulator) stands in for the kernel module only, so it never lifts this mark.
needs_cuda_tensors = pytest.mark.skipif(not cuda_ready(), reason="needs a GPU: whole ops on CUDA tensors")

CPU, GPU = _ext.C, _ext.CUDA


def stream() -> int:
    """The current CUDA stream's handle: what the CUDA kernels take where the CPU's take a thread count."""
    return torch.cuda.current_stream().cuda_stream


def finish() -> None:
    """Wait for the launched kernels, so a fault inside one surfaces in the test that caused it."""
    GPU.synchronize(stream())


def on_gpu(t: torch.Tensor) -> torch.Tensor:
    """The same values, layout (strides) included, on the GPU."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="cuda")
    out.copy_(t)
    return out


def special_values(dtype: torch.dtype) -> list[float]:
    """Values every CUDA kernel test mixes into its random inputs."""
    info = torch.finfo(dtype)
    return [0.0, -0.0, float("inf"), float("-inf"), float("nan"), info.tiny, info.tiny / 4, -info.tiny / 8,
            info.max, -info.max, 1.0, -1.0]


def random_input(shape, dtype=torch.float32, seed: int = 0, specials: bool = True) -> torch.Tensor:
    """Normal values (CPU) with a fixed seed; with `specials`, about 1 in 16 elements is a special value."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    if specials and x.numel():
        flat = x.view(-1)
        pick = torch.randint(0, 16, (flat.numel(),), generator=g) == 0
        vals = torch.tensor(special_values(dtype), dtype=dtype)
        which = torch.randint(0, len(vals), (flat.numel(),), generator=g)
        flat[pick] = vals[which[pick]]
    return x
