"""pytest plugin: run tests/cuda against the host emulation of the CUDA kernels (build.py), on a
machine without a GPU. Loaded by tests/cuda/emulate.py as `-p emulated_cuda_plugin`, with
REPMODE_EMU_MODULE_DIR naming the folder that holds `repmode_cuda_emulated`.

The substitutions, and nothing else:
- support.cuda_helpers.GPU is the emulated module, its `needs_cuda` mark no longer skips, and `stream()`
  is a fixed non-null handle (the launchers' StreamScope takes its stream path);
- a tensor asked for on a CUDA device is made on the CPU with the same arguments (sizes, strides,
  dtype), and every device transfer (`.to(device)`, `.cuda()`, `.cpu()`) copies, as a real
  transfer between devices does, so no "GPU" tensor aliases a CPU one;
- after each test, every scratch block the kernels took with cudaMallocAsync is freed again.
"""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode

FAKE_STREAM = 0x5EED0  # any non-null handle: the emulator has one device and one stream


def _is_cuda(device) -> bool:
    if isinstance(device, int):  # a bare index names a CUDA device
        return True
    return isinstance(device, (str, torch.device)) and torch.device(device).type == "cuda"


def _is_device(x) -> bool:
    return isinstance(x, (str, torch.device)) and not isinstance(x, torch.dtype)


class CudaOnCpu(TorchFunctionMode):
    """Tensors requested on a CUDA device are made on the CPU; every transfer copies."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.cuda:
            return args[0].to("cpu", copy=True)
        if func is torch.Tensor.cpu:
            return args[0].to("cpu", copy=True)
        if func is torch.Tensor.to:
            args = list(args)
            if len(args) > 1 and _is_device(args[1]):
                args[1] = "cpu"
                kwargs["copy"] = True
            if "device" in kwargs:
                kwargs["device"] = "cpu"
                kwargs["copy"] = True
            return func(*args, **kwargs)
        if "device" in kwargs and _is_cuda(kwargs["device"]):
            kwargs["device"] = "cpu"
        return func(*args, **kwargs)


def _load_module():
    folder = os.environ.get("REPMODE_EMU_MODULE_DIR")
    if not folder:
        raise pytest.UsageError("emulated_cuda_plugin: set REPMODE_EMU_MODULE_DIR (tests/cuda/emulate.py does)")
    sys.path.insert(0, folder)
    return importlib.import_module("repmode_cuda_emulated")


_mode = CudaOnCpu()


def pytest_configure(config):
    emulated = _load_module()
    config._repmode_emulated = emulated
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, as pytest's `pythonpath` adds it
    from support import cuda_helpers

    cuda_helpers.GPU = emulated
    cuda_helpers.needs_cuda = pytest.mark.emulated_cuda
    cuda_helpers.stream = lambda: FAKE_STREAM
    config.addinivalue_line("markers", "emulated_cuda: a CUDA test run on the host emulator")
    _mode.__enter__()


def pytest_unconfigure(config):
    if hasattr(config, "_repmode_emulated"):
        _mode.__exit__(None, None, None)


def pytest_report_header(config):
    cap = os.environ.get("REPMODE_EMU_GRID_CAP", "3")
    return (f"CUDA kernels: HOST EMULATOR (not a GPU), grid capped at {cap} blocks, "
            f"module {config._repmode_emulated.__file__}")


def pytest_runtest_teardown(item):
    live = item.config._repmode_emulated.live_allocation_count()
    if live:
        raise AssertionError(f"{live} cudaMallocAsync block(s) not freed after {item.nodeid}")
