"""The compiled extension ``repmode._C`` and the small facts Python needs from it."""
from __future__ import annotations

import importlib
import importlib.util
import os

# torch first: its bundled libgomp.so.1 is then the OpenMP runtime _C binds to as well, so
# repmode's kernels and torch's share one thread pool instead of two spinning against each other.
import torch

try:
    from . import _C  # noqa: F401  (built from csrc/ by setup.py)
except ImportError as exc:  # pragma: no cover - only on a broken install
    raise ImportError(
        "repmode's compiled extension repmode._C is missing or failed to load "
        f"({exc}). Reinstall with `pip install -e .` from the repository root."
    ) from exc

C = _C

# The CUDA kernels, when this install built them (setup.py's REPMODE_CUDA switch); None otherwise.
# A build that exists but does not load is not silently a CPU-only install: its error is kept
# and shown wherever a CUDA tensor meets repmode.
CUDA = None
CUDA_LOAD_ERROR: str | None = None
if importlib.util.find_spec(f"{__package__}._C_cuda") is not None:
    try:
        CUDA = importlib.import_module(f"{__package__}._C_cuda")
    except ImportError as exc:
        CUDA_LOAD_ERROR = f"repmode._C_cuda exists but failed to load: {exc}"



def codes(table: str):
    """One code table of the C++ side (csrc/common/, exported by ``_C.codes()``): a dict of name ->
    code ("EwOp", "RandomDist", "PoolKind", "Reduction", "Dtype") or the list "ConvGeom"."""
    return _C.codes()[table]


# dtype -> the small integer the C++ side understands (REPMODE_DTYPES in csrc/common/defs.h).
DTYPE_CODE = {getattr(torch, name): code for name, code in codes("Dtype").items()}


def flush_denormal_active() -> bool:
    return bool(_C.flush_denormal_active())


def set_cpu_isa(name: str) -> None:
    """Force the CPU SIMD path: ``scalar``, ``avx2``, ``avx512`` or ``auto`` (the best available)."""
    if not _C.set_cpu_isa(name):
        raise ValueError(f"CPU ISA path {name!r} is not available on this CPU (best: {_C.best_cpu_isa()})")


def cpu_isa() -> str:
    return _C.cpu_isa()


_env_isa = os.environ.get("REPMODE_CPU_ISA", "").strip().lower()
if _env_isa and _env_isa != "auto":
    try:
        set_cpu_isa(_env_isa)
    except ValueError as error:  # name the variable: the user did not call set_cpu_isa
        raise ValueError(f"REPMODE_CPU_ISA={_env_isa}: {error}") from None
