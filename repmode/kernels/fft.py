"""FFT: ``_fft_c2c``, ``_fft_r2c`` and ``_fft_c2r`` (every ``torch.fft`` transform, ``stft`` and
``istft`` reach them), plus the few complex elementwise operations the FFT path needs (complex
``abs``, ``sgn``, ``neg``, ``mul`` and ``add``, reached by spectrogram magnitudes and by the transforms'
backward formulas; ``elementwise.elementwise_general`` hands complex operands here). Canonical
order: csrc/common/fft.h and docs/semantics.md, "FFT"."""
from __future__ import annotations

import math

import torch

from ..registry import register_composite, register_kernel, register_passthrough
from ._common import (
    FLOAT_ONLY,
    FLOAT_WIDENED,
    C,
    call_registered,
    check_device,
    get_num_threads,
    param,
    unsupported,
)

aten = torch.ops.aten
Tensor = torch.Tensor

# fft_lines modes (csrc/cpu/entry_points.h)
_C2C, _R2C, _C2R = 0, 1, 2
_REAL_CODE = {torch.float32: 0, torch.float64: 1, torch.complex64: 0, torch.complex128: 1}
_COMPLEX_OF = {torch.float32: torch.complex64, torch.float64: torch.complex128}
_REAL_OF = {torch.complex64: torch.float32, torch.complex128: torch.float64}

_COMPLEX = ("complex",)  # the registry's dtype tag of complex64 and complex128 inputs

# Tests set this to run every line through the plain scalar transform instead of the lane walk.
USE_REFERENCE = False


def _plain(x: Tensor) -> Tensor:
    """x with its conjugate and negative bits applied (exact sign flips, natively): the kernels read
    memory, which holds the un-conjugated values of a conjugate view."""
    if x.is_conj():
        x = x.resolve_conj()
    if x.is_neg():
        x = x.resolve_neg()
    return x


def _check(func, args, kwargs, x: Tensor, complex_input: bool) -> None:
    check_device(func, args, kwargs, x)
    if not x.is_cpu:
        raise unsupported(func, args, kwargs, "the FFT has CPU kernels only so far; move the tensor to the CPU")
    want = (torch.complex64, torch.complex128) if complex_input else (torch.float32, torch.float64)
    if x.dtype not in want:
        raise unsupported(func, args, kwargs, f"dtype {x.dtype} is not supported by the FFT (it takes "
                                              f"{' and '.join(str(d) for d in want)})")


def _dims(x: Tensor, dim) -> list[int]:
    nd = max(x.dim(), 1)
    dims = [int(d) % nd for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"FFT dims must be unique, got {list(dim)}")
    return dims


def _divisor(normalization: int, signal_numel: int) -> float:
    """The number every result is divided by (docs/semantics.md, "FFT"): 1 (none), sqrt(N) (the
    IEEE square root of the float64 N) or N, N = the product of the transformed lengths."""
    if normalization == 0:
        return 1.0
    if normalization == 1:
        return math.sqrt(float(signal_numel))
    if normalization == 2:
        return float(signal_numel)
    raise RuntimeError(f"unknown FFT normalization mode {normalization}")


def _flat_step(shape, strides) -> int | None:
    """The memory step of the row-major flat index over dims (shape, strides) (size-1 dims
    ignored), or None when they do not form one; 0 when every dim has size 1."""
    dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
    if not dims:
        return 0
    if any(dims[i][1] != dims[i + 1][1] * dims[i + 1][0] for i in range(len(dims) - 1)):
        return None
    return dims[-1][1]


def _pass(mode: int, src: Tensor, dim: int, n_fft: int, n_dst: int, forward: bool, real_dtype, divisor: float):
    """One pass of 1-d transforms along ``dim`` of ``src`` (complex for c2c and c2r, real for r2c): a
    new contiguous tensor shaped as ``src`` with ``dim`` of size ``n_dst``, complex of ``real_dtype``
    (real for c2r). The lines are (outer, n, inner) with outer and inner each one flat index over
    the other dims; a layout where they are not is copied first (exact data movement)."""
    shape = list(src.shape)
    outer, n_src, inner = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])
    s_outer = _flat_step(shape[:dim], src.stride()[:dim])
    s_inner = _flat_step(shape[dim + 1:], src.stride()[dim + 1:])
    if s_outer is None or s_inner is None:
        src = src.contiguous()
        s_outer = _flat_step(shape[:dim], src.stride()[:dim])
        s_inner = _flat_step(shape[dim + 1:], src.stride()[dim + 1:])
    shape[dim] = n_dst
    out = torch.empty(shape, dtype=real_dtype if mode == _C2R else _COMPLEX_OF[real_dtype])
    if out.numel():
        C.fft_lines(mode, _REAL_CODE[src.dtype], src.data_ptr(), [s_outer, src.stride(dim), s_inner],
                    _REAL_CODE[real_dtype], out.data_ptr(), outer, inner, n_src, n_fft, n_dst, forward, divisor,
                    get_num_threads(), USE_REFERENCE)
    return out


def _c2c_passes(x: Tensor, dims: list[int], forward: bool, real, divisor: float, final: bool = True) -> Tensor:
    """c2c along ``dims`` in decreasing dim order. Results between passes are complex128 (complex64
    data: rounded once, at the end); the division is in the last pass (when ``final``)."""
    order = sorted(dims, reverse=True)
    for i, d in enumerate(order):
        last = final and i == len(order) - 1
        n = x.shape[d]
        x = _pass(_C2C, x, d, n, n, forward, real if last else torch.float64, divisor if last else 1.0)
    return x


def _scaled_copy(x: Tensor, divisor: float) -> Tensor:
    """x (no transform: an empty dim list or no elements) divided by ``divisor``, as a new tensor."""
    if x.numel() == 0 or divisor == 1.0:
        return x.clone(memory_format=torch.contiguous_format)
    if x.is_complex():
        v = torch.view_as_real(_plain(x))
        return torch.view_as_complex(call_registered(aten.div.Tensor, v, divisor).contiguous())
    return call_registered(aten.div.Tensor, x, divisor)


@register_kernel([aten._fft_c2c.default], _COMPLEX, out=[aten._fft_c2c.out])
def fft_c2c(func, args, kwargs):
    """c2c: 1-d transforms along each dim of ``dim``, in decreasing dim order."""
    x = param(func, args, kwargs, "self")
    _check(func, args, kwargs, x, complex_input=True)
    dims = _dims(x, param(func, args, kwargs, "dim"))
    forward = bool(param(func, args, kwargs, "forward"))
    divisor = _divisor(int(param(func, args, kwargs, "normalization")), math.prod(x.shape[d] for d in dims))
    if x.numel() == 0 or not dims:
        return _scaled_copy(x, divisor)
    return _c2c_passes(_plain(x), dims, forward, _REAL_OF[x.dtype], divisor)


@register_kernel([aten._fft_r2c.default], FLOAT_ONLY, out=[aten._fft_r2c.out])
def fft_r2c(func, args, kwargs):
    """r2c: the last dim of ``dim`` first (real input, imaginary +0; n // 2 + 1 outputs when
    onesided), then c2c forward along the others in decreasing dim order."""
    x = param(func, args, kwargs, "self")
    _check(func, args, kwargs, x, complex_input=False)
    dims = _dims(x, param(func, args, kwargs, "dim"))
    onesided = bool(param(func, args, kwargs, "onesided"))
    real = x.dtype
    if not dims:
        raise RuntimeError("_fft_r2c: needs at least one dim")
    divisor = _divisor(int(param(func, args, kwargs, "normalization")), math.prod(x.shape[d] for d in dims))
    last = dims[-1]
    n = x.shape[last]
    n_dst = n // 2 + 1 if onesided else n
    rest = dims[:-1]
    if x.numel() == 0:
        shape = list(x.shape)
        shape[last] = n_dst if n else 0
        return torch.empty(shape, dtype=_COMPLEX_OF[real])
    y = _pass(_R2C, x, last, n, n_dst, True, real if not rest else torch.float64, 1.0 if rest else divisor)
    if rest:
        y = _c2c_passes(y, rest, True, real, divisor)
    return y


@register_kernel([aten._fft_c2r.default], _COMPLEX, out=[aten._fft_c2r.out])
def fft_c2r(func, args, kwargs):
    """c2r: c2c inverse along every dim of ``dim`` but the last, in decreasing dim order, then the
    last dim: X_0 .. X_{n/2} extended as a Hermitian sequence of length last_dim_size (imaginary
    parts of X_0 and, n even, X_{n/2} taken as +0), inverse transform, real part."""
    x = param(func, args, kwargs, "self")
    _check(func, args, kwargs, x, complex_input=True)
    dims = _dims(x, param(func, args, kwargs, "dim"))
    n = int(param(func, args, kwargs, "last_dim_size"))
    real = _REAL_OF[x.dtype]
    if not dims:
        raise RuntimeError("_fft_c2r: needs at least one dim")
    last = dims[-1]
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    if x.shape[last] < n // 2 + 1:
        raise RuntimeError(f"_fft_c2r: the input has {x.shape[last]} entries along dim {last}, the transform of "
                           f"length {n} needs {n // 2 + 1}")
    signal = math.prod(x.shape[d] for d in dims[:-1]) * n
    divisor = _divisor(int(param(func, args, kwargs, "normalization")), signal)
    if x.numel() == 0:
        shape = list(x.shape)
        shape[last] = n
        return torch.empty(shape, dtype=real)
    y = _plain(x)
    if dims[:-1]:
        y = _c2c_passes(y, dims[:-1], False, real, 1.0, final=False)
    return _pass(_C2R, y, last, n, n, False, real, divisor)


# ---- complex elementwise: only what the FFT path reaches -------------------------------------

_COMPLEX_REFUSAL = ("complex arithmetic is supported only where the FFT path needs it (abs, sgn, neg, mul and "
                    "add/sub with alpha 1; docs/semantics.md, \"FFT\"), not for this op")


def _pairs(z: Tensor) -> Tensor:
    """The (..., 2) real view of a complex tensor with its conj/neg bits applied."""
    return torch.view_as_real(_plain(z))


def _to_complex(pairs: Tensor) -> Tensor:
    return torch.view_as_complex(pairs.contiguous())


def complex_abs(z: Tensor) -> Tensor:
    """|z| per element (csrc/common/fft.h, complex_abs_value), of z's real dtype."""
    z = _plain(z).contiguous()
    out = torch.empty(z.shape, dtype=_REAL_OF[z.dtype])
    if out.numel():
        C.complex_abs(_REAL_CODE[z.dtype], z.data_ptr(), out.data_ptr(), z.numel(), get_num_threads())
    return out


def _sgn(z: Tensor) -> Tensor:
    """z / |z| componentwise (each part divided by |z|, one IEEE division), 0 where |z| == 0."""
    a = complex_abs(z)
    q = call_registered(aten.div.Tensor, _pairs(z), a.unsqueeze(-1))
    return _to_complex(torch.where((a == 0).unsqueeze(-1), torch.zeros((), dtype=q.dtype), q))


def _mul(a, b):
    """The complex product: complex x complex is (ac - bd, ad + bc) (four products, then one
    subtraction and one addition, as csrc/common/fft.h cx_mul); complex x real (tensor or Python
    number) multiplies each part by the real."""
    ca, cb = isinstance(a, Tensor) and a.is_complex(), isinstance(b, Tensor) and b.is_complex()
    if ca and cb:
        pa, pb = _pairs(a), _pairs(b)
        ar, ai, br, bi = pa[..., 0], pa[..., 1], pb[..., 0], pb[..., 1]
        m = lambda u, v: call_registered(aten.mul.Tensor, u, v)  # noqa: E731
        re = call_registered(aten.sub.Tensor, m(ar, br), m(ai, bi))
        im = call_registered(aten.add.Tensor, m(ar, bi), m(ai, br))
        return torch.view_as_complex(torch.stack([re, im], -1))
    z, r = (a, b) if ca else (b, a)
    if isinstance(r, Tensor) and r.dim() > 0:
        r = r.unsqueeze(-1)
    return _to_complex(call_registered(aten.mul.Tensor, _pairs(z), r))


def _add(a, b, alpha, subtract: bool):
    """Complex add/sub with alpha 1: part by part (a real operand is (r, +0))."""
    if alpha != 1 or not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.dim() != b.dim():
        return None  # Python numbers and 0-dim mixes (their type promotion differs from the pairs') refused
    op = aten.sub.Tensor if subtract else aten.add.Tensor
    pa = _pairs(a) if isinstance(a, Tensor) and a.is_complex() else _real_pairs(a)
    pb = _pairs(b) if isinstance(b, Tensor) and b.is_complex() else _real_pairs(b)
    return _to_complex(call_registered(op, pa, pb))


def _real_pairs(r):
    return torch.stack([r, torch.zeros_like(r)], -1)


def complex_elementwise(op_name: str, func, args, kwargs, a, b, params, inplace: bool):
    """The complex forms of the elementwise ops the FFT path reaches (called by
    elementwise.elementwise_general when an operand is complex); anything else is refused."""
    result = None
    if op_name == "ABS" and b is None:
        result = complex_abs(a)
    elif op_name == "SIGN" and b is None:
        result = _sgn(a)
    elif op_name == "NEG" and b is None:
        result = _to_complex(call_registered(aten.neg.default, _pairs(a)))
    elif op_name == "MUL" and not isinstance(b, complex) and not isinstance(a, complex):
        result = _mul(a, b)
    elif op_name in ("ADD", "SUB"):
        result = _add(a, b, params[0] if params else 1, op_name == "SUB")
    if result is None:
        raise unsupported(func, args, kwargs, _COMPLEX_REFUSAL)
    if inplace:
        if result.dtype != a.dtype or result.shape != a.shape:
            raise RuntimeError(f"result type {result.dtype} and shape {tuple(result.shape)} can't be cast to "
                               f"the desired output of type {a.dtype} and shape {tuple(a.shape)}")
        a.copy_(result)
        return a
    return result


# ---- exact companions of the FFT path ----------------------------------------------------------

register_passthrough([aten._conj.default], reason="view: sets the conjugate bit, no data touched (the FFT "
                     "kernels resolve it, an exact sign flip, before reading)", family="fft")
register_passthrough([aten.conj_physical.default, aten.conj_physical.out, aten.conj_physical_.default,
                      aten._conj_physical.default, aten.resolve_conj.default, aten.resolve_neg.default],
                     reason="exact: flips the sign of the imaginary part (or of every part: resolve_neg), "
                            "a copy for real tensors; no rounding", family="fft")
register_passthrough([aten.fft_fftfreq.default, aten.fft_fftfreq.out, aten.fft_rfftfreq.default,
                      aten.fft_rfftfreq.out],
                     reason="integers 0, 1, ..., -1 (exact in the dtype) times the one number 1/(n*d) "
                            "(a Python float rounded once to the dtype): one IEEE multiplication each",
                     family="fft")


# ---- window functions (stft/istft windows): torch's own formulas on repmode's elementwise ops ----

def _window_setup(func, args, kwargs):
    """(window_length, periodic, dtype) of a window overload; CPU only."""
    length = int(param(func, args, kwargs, "window_length"))
    names = {a.name for a in func._schema.arguments}
    periodic = bool(param(func, args, kwargs, "periodic")) if "periodic" in names else True
    dtype = param(func, args, kwargs, "dtype") or torch.get_default_dtype()
    device = param(func, args, kwargs, "device")
    if device is not None and torch.device(device).type != "cpu":
        raise unsupported(func, args, kwargs, "window functions have CPU kernels only so far")
    layout = param(func, args, kwargs, "layout")
    if layout is not None and layout != torch.strided:
        raise unsupported(func, args, kwargs, f"layout {layout} is not supported (strided is)")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{func._schema.name.split('::')[1]} expects floating point dtypes, got: {dtype}")
    if length < 0:
        raise RuntimeError(f"{func._schema.name.split('::')[1]} requires non-negative window length, got "
                           f"window_length={length}")
    return length, periodic, dtype


def _op(op, *args):
    return call_registered(op, *args)


def _window(func, args, kwargs, body):
    length, periodic, dtype = _window_setup(func, args, kwargs)
    if length == 0:
        return torch.empty(0, dtype=dtype)
    if length == 1:
        return torch.ones(1, dtype=dtype)
    n = length + 1 if periodic else length
    w = body(torch.arange(n, dtype=dtype), n)  # arange: the exact integers 0 .. n-1
    return w[:n - 1].clone() if periodic else w


@register_composite([aten.hamming_window.default, aten.hamming_window.periodic, aten.hamming_window.periodic_alpha,
                     aten.hamming_window.periodic_alpha_beta, aten.hann_window.default, aten.hann_window.periodic],
                    FLOAT_WIDENED)
def hamming_window(func, args, kwargs):
    """torch's sequence: ((k * (2 pi / (n - 1))).cos() * -beta) + alpha, each step one of repmode's
    elementwise ops (cos correctly rounded); hann: alpha = beta = 0.5; periodic: n = length + 1,
    the first `length` values."""
    names = {a.name for a in func._schema.arguments}
    alpha = float(param(func, args, kwargs, "alpha")) if "alpha" in names else (
        0.5 if func._schema.name == "aten::hann_window" else 0.54)
    beta = float(param(func, args, kwargs, "beta")) if "beta" in names else (
        0.5 if func._schema.name == "aten::hann_window" else 0.46)

    def body(k, n):
        c = _op(aten.cos.default, _op(aten.mul.Tensor, k, math.pi * 2.0 / float(n - 1)))
        return _op(aten.add.Tensor, _op(aten.mul.Tensor, c, -beta), alpha)

    return _window(func, args, kwargs, body)


@register_composite([aten.blackman_window.default, aten.blackman_window.periodic], FLOAT_WIDENED)
def blackman_window(func, args, kwargs):
    """torch's sequence: t = k * (pi / (n - 1)); (cos(t * 4) * 0.08 - cos(t * 2) * 0.5) + 0.42."""
    def body(k, n):
        t = _op(aten.mul.Tensor, k, math.pi / float(n - 1))
        a = _op(aten.mul.Tensor, _op(aten.cos.default, _op(aten.mul.Tensor, t, 4)), 0.08)
        b = _op(aten.mul.Tensor, _op(aten.cos.default, _op(aten.mul.Tensor, t, 2)), 0.5)
        return _op(aten.add.Tensor, _op(aten.sub.Tensor, a, b), 0.42)

    return _window(func, args, kwargs, body)


@register_composite([aten.bartlett_window.default, aten.bartlett_window.periodic], FLOAT_WIDENED)
def bartlett_window(func, args, kwargs):
    """torch's sequence: t = k * (2 / (n - 1)); from index (n - 1) // 2 + 1 on, t = -t + 2."""
    def body(k, n):
        t = _op(aten.mul.Tensor, k, 2.0 / float(n - 1))
        half = ((n - 1) >> 1) + 1
        tail = _op(aten.add.Tensor, _op(aten.mul.Tensor, t[half:], -1), 2)
        return torch.cat([t[:half], tail])

    return _window(func, args, kwargs, body)

