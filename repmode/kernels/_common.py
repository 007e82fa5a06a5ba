"""Small helpers shared by the kernel families: dtype codes, errors, out= handling."""
from __future__ import annotations

import functools
import math

import torch

from .._ext import DTYPE_CODE, C
from ..errors import unsupported
from ..registry import DISPATCH, LOW_PRECISION, round_to, run_native, write_out

# Re-exported for the families: one import line gives a family everything it needs.
__all__ = ["C", "DTYPE_CODE", "DISPATCH", "LOW_PRECISION", "round_to", "run_native", "unsupported", "write_out"]

FLOATS = (torch.float32, torch.float64)
get_num_threads = torch.get_num_threads

# The dtype tags (registry.DTYPE_TAGS) the families declare for their registrations.
FLOAT_ONLY = ("float32", "float64")
FLOAT_WIDENED = FLOAT_ONLY + ("widened",)
FLOAT_WIDENED_INT = FLOAT_WIDENED + ("integer",)
FLOAT_INT = FLOAT_ONLY + ("integer",)
FLOAT_HALF_INT = FLOAT_ONLY + ("half", "integer")
INT_ONLY = ("integer",)
ANY = ("any",)


def param(func, args, kwargs, name: str):
    """Argument ``name`` of overload ``func`` as called: positional, keyword or the schema's default.
    The table of positions and defaults is built once per overload from its schema, so families read
    arguments by name without typing positions."""
    table = _PARAMS.get(func)
    if table is None:
        table = _PARAMS[func] = _param_table(func)
    index, default = table[name]
    if index < len(args):
        return args[index]
    if kwargs and name in kwargs:
        return kwargs[name]
    return default


def params(func, args, kwargs, *names: str) -> tuple:
    """``param`` for several names at once."""
    return tuple(param(func, args, kwargs, n) for n in names)


def named_arguments(func, args, kwargs) -> dict:
    """Argument name -> value for every argument of overload ``func`` (defaults filled in)."""
    return {a.name: param(func, args, kwargs, a.name) for a in func._schema.arguments}


def arguments(func, args, kwargs) -> list:
    """Every argument of overload ``func`` in schema order (positional, keyword or default)."""
    if not kwargs and len(args) == len(func._schema.arguments):
        return list(args)
    return [param(func, args, kwargs, a.name) for a in func._schema.arguments]


_PARAMS: dict = {}
_KEYWORD_ONLY = 1 << 30  # never a positional index


def _param_table(func) -> dict:
    table = {}
    for i, a in enumerate(func._schema.arguments):
        default = a.default_value if a.has_default_value() else None
        table[a.name] = (_KEYWORD_ONLY if a.kwarg_only else i, default)
    return table


def float_code(func, args, kwargs, *tensors) -> int:
    """The C++ dtype code of the first tensor (all on one device with kernels: see check_device), or
    UnsupportedOpError."""
    check_device(func, args, kwargs, *tensors)
    code = DTYPE_CODE.get(tensors[0].dtype)
    if code is None:
        raise unsupported(func, args, kwargs,
                          f"dtype {tensors[0].dtype} is not supported yet (float32 and float64 are)")
    return code


_HALF_FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def check_float_half_int(func, args, kwargs, *tensors) -> None:
    """UnsupportedOpError unless every tensor has a dtype of the FLOAT_HALF_INT tags (float32,
    float64, bfloat16, float16, integers, bool): complex, float8 and quantized dtypes are refused."""
    for t in tensors:
        if isinstance(t, torch.Tensor) and (t.dtype.is_complex or t.is_quantized or
                                            (t.dtype.is_floating_point and t.dtype not in _HALF_FLOATS)):
            raise unsupported(func, args, kwargs, f"dtype {t.dtype} is not supported (float32, float64, bfloat16, "
                                                  "float16 and integer dtypes are)")


def split_at_dim(x: torch.Tensor, dim: int) -> tuple[int, int, int]:
    """(outer, n, inner) of ``x`` split at ``dim`` (a 0-dim tensor counts as shape (1,))."""
    nd = max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    dim %= nd
    shape = list(x.shape) or [1]
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


def call_registered(op, *args, **kwargs):
    """Run ``op`` through repmode's own implementation: how composite families build on other
    registered ops (inside an implementation the dispatch mode is not active)."""
    return DISPATCH[op](op, args, kwargs)


def _no_kernels_for(device: torch.device) -> str:
    from .. import _ext
    if device.type == "cuda" and _ext.CUDA_LOAD_ERROR:
        return f"tensors on {device} need repmode's CUDA kernels, and {_ext.CUDA_LOAD_ERROR}. "
    if device.type == "cuda" and _ext.CUDA is not None:
        return (f"tensors on {device} need repmode's CUDA kernels, and this op has CPU kernels only so far "
                "(docs/cuda.md lists the ops the CUDA backend runs). ")
    return (f"tensors on {device} need repmode's {device.type.upper()} kernels, and this build of repmode has "
            "CPU kernels only (the CUDA backend is built with REPMODE_CUDA=1; see docs/cuda.md). ")


_CPU = torch.device("cpu")


def check_device(func, args, kwargs, *tensors) -> torch.device:
    """The one device of ``tensors`` (None and numbers skipped), for families with CPU and CUDA kernels:
    the CPU, or a CUDA device when repmode._C_cuda is loaded. Tensors on two devices raise torch's own
    error; a 0-dim CPU tensor beside GPU tensors (which torch accepts) is refused by name."""
    present = [t for t in tensors if isinstance(t, torch.Tensor)]
    if all(t.is_cpu for t in present):  # the common case, kept cheap
        return _CPU
    devices = {t.device for t in present}
    for device in sorted(devices, key=str):  # a device without kernels is named first: the actionable error
        check_kernel_device(func, args, kwargs, device)
    if len(devices) > 1:
        if all(t.is_cpu and t.dim() == 0 for t in present if t.is_cpu):
            raise unsupported(func, args, kwargs, "a 0-dim CPU tensor beside tensors on another device is not "
                                                  "supported: pass a Python number or move it to that device")
        a, b = sorted(str(d) for d in devices)[:2]
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{a} and {b}!")
    return present[0].device


def check_kernel_device(func, args, kwargs, device: torch.device) -> torch.device:
    """``device`` if repmode has kernels there (the CPU; CUDA when repmode._C_cuda is loaded), else
    UnsupportedOpError."""
    from .. import _ext
    if device.type == "cpu" or (device.type == "cuda" and _ext.CUDA is not None):
        return device
    raise unsupported(func, args, kwargs, _no_kernels_for(device) +
                      "Move the computation to the CPU (.cpu()) to run it reproducibly.")


def kernels_for(t: torch.Tensor):
    """The kernel module for ``t``'s device: repmode._C (CPU) or repmode._C_cuda (CUDA). Both take the
    same arguments except the last (see :func:`launch_arg`)."""
    if t.is_cpu:
        return C
    from .._ext import CUDA
    return CUDA


# The current stream of a CUDA device as a raw pointer, without building a torch.cuda.Stream object
# per launch (the accessor torch's own compiler uses; absent from CPU-only builds of torch).
_raw_cuda_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def launch_arg(t: torch.Tensor) -> int:
    """A kernel's last argument for ``t``'s device: the thread count on the CPU, the current CUDA
    stream of ``t``'s device on a GPU (the kernels launch on it, ordered with torch's own work)."""
    if t.is_cpu:
        return get_num_threads()
    if _raw_cuda_stream is not None:
        return _raw_cuda_stream(t.get_device())
    return torch.cuda.current_stream(t.device).cuda_stream


def stream_only(t: torch.Tensor) -> tuple:
    """The trailing arguments of a kernel whose CPU form takes no thread count: none on the CPU, the
    stream on a GPU (``kernels_for(t).name(..., *stream_only(t))``)."""
    return () if t.is_cpu else (launch_arg(t),)


def widened(dtype_index: int | None = None):
    """Decorator for ops whose bf16/fp16 inputs accumulate in float32: when the first argument is
    bf16/fp16, every bf16/fp16 tensor argument is widened exactly to float32, the op runs in
    float32, and each floating result is rounded once back to that dtype — unless the caller
    asked for another dtype (``dtype=`` keyword or the positional argument at ``dtype_index``)."""

    def wrap(impl):
        @functools.wraps(impl)
        def run(func, args, kwargs):
            x = args[0]
            if not (isinstance(x, torch.Tensor) and x.dtype in LOW_PRECISION):
                return impl(func, args, kwargs)
            requested = (kwargs or {}).get("dtype")
            if requested is None and dtype_index is not None and len(args) > dtype_index:
                requested = args[dtype_index]
            low = x.dtype
            wide = tuple(a.to(torch.float32) if isinstance(a, torch.Tensor) and a.dtype in LOW_PRECISION else a
                         for a in args)
            result = impl(func, wide, kwargs)
            if requested is not None:
                return result
            return _narrow(result, low)

        return run

    return wrap


def _narrow(result, dtype):
    if isinstance(result, tuple):
        return tuple(_narrow(r, dtype) for r in result)
    if isinstance(result, torch.Tensor) and result.dtype == torch.float32:
        return round_to(result, dtype)
    return result


def broadcast_shape(a: torch.Size, b: torch.Size) -> torch.Size:
    """The broadcast of two shapes (torch's C++ rule; torch.broadcast_shapes is Python and ~50x slower)."""
    if a == b:
        return a
    return torch._C._infer_size(torch.Size(a), torch.Size(b))


def suggest_memory_format(t: torch.Tensor):
    """The memory format torch's kernels (pooling, batch norm) give a result like ``t``: its
    ``suggest_memory_format``, read from the strides. Ambiguous layouts (size-1 dims) count as
    contiguous, as torch decides them."""
    if t.layout != torch.strided or t.dim() not in (4, 5):
        return torch.contiguous_format
    sizes, strides = t.shape, t.stride()
    if strides[1] == 0:
        return torch.contiguous_format
    smallest = 0
    for d in ((1, 3, 2, 0) if t.dim() == 4 else (1, 4, 3, 2, 0)):
        if sizes[d] == 0 or strides[d] < smallest or (d == 0 and smallest == strides[1]):
            return torch.contiguous_format
        smallest = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return torch.channels_last if t.dim() == 4 else torch.channels_last_3d


def iterator_strides(shape, operands) -> list[int]:
    """The strides torch gives the result of an elementwise op over ``operands`` broadcast to
    ``shape`` (TensorIterator's rule): dims ordered innermost-first by the operands' strides,
    the first operand with a strict preference deciding each pair; broadcast dims (stride 0)
    do not vote; equal strides put the smaller dim inside. Layout only: no values depend on it."""
    nd = len(shape)
    tensors = [x for x in operands if isinstance(x, torch.Tensor)]
    if all(tuple(x.shape) == tuple(shape) for x in tensors):  # TensorIterator's fast set-ups
        if all(x.is_contiguous() for x in tensors):
            return _dense_strides(shape, range(nd - 1, -1, -1))
        if nd == 4 and all(x.is_contiguous(memory_format=torch.channels_last) for x in tensors):
            return _dense_strides(shape, (1, 3, 2, 0), clamp=False)
    views = []
    for x in operands:
        if isinstance(x, torch.Tensor) and x.dim() > 0:
            lead = nd - x.dim()
            views.append([0] * lead + [0 if x.shape[i] == 1 and shape[lead + i] != 1 else x.stride(i)
                                       for i in range(x.dim())])

    def should_swap(d0: int, d1: int) -> int:
        for st in views:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(nd - 1, -1, -1))  # perm[0]: the innermost dim
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            order = should_swap(perm[d0], perm[d1])
            if order > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif order < 0:
                break
    strides = _dense_strides(shape, perm, clamp=False)
    first = tensors[0].stride() if tensors else None
    if first is not None and all(tuple(x.shape) == tuple(shape) and x.stride() == first for x in tensors) \
            and all(strides[d] == first[d] for d in range(nd) if shape[d] > 1):
        return list(first)  # one dense layout shared by every operand: kept as it is
    return strides


def _dense_strides(shape, inner_first, clamp: bool = True) -> list[int]:
    """Dense strides laying out the dims of ``shape`` with ``inner_first[0]`` innermost;
    ``clamp``: a size-0 dim counts as 1 for the dims outside it (torch's contiguous strides)."""
    strides, step = [0] * len(shape), 1
    for d in inner_first:
        strides[d] = step
        step *= max(shape[d], 1) if clamp else shape[d]
    return strides


def normalize_dims(dims, ndim: int) -> list[int]:
    """Sorted unique non-negative dims; ``None`` or ``[]`` means every dim (torch's rule)."""
    if dims is None:
        return list(range(ndim))
    if isinstance(dims, int):
        dims = [dims]
    if len(dims) == 0:
        return list(range(ndim))
    rank = max(ndim, 1)
    out = set()
    for d in dims:
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
        out.add(d % rank)
    return sorted(d for d in out if d < ndim) if ndim else []
