"""The per-example checker of the property suites (tests/test_properties*.py), and the error
bounds they share. ``check`` runs one op natively and under repmode and asserts (a)-(e) of
tests/properties/test_properties.py's docstring; ``assert_within`` is the float64-reference comparison."""
from __future__ import annotations

import math

import hypothesis  # the property suites import this module after pytest.importorskip("hypothesis")
import torch

import repmode

from .helpers import assert_bitwise_equal, bits, num_threads
from .strategies import CANONICAL_NAN, contiguous_copy

ERRORS = (RuntimeError, ValueError, IndexError, TypeError, repmode.UnsupportedOpError)


def _flat(out) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out.detach()]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    assert out is None, type(out)
    return []


def _stride_class(t: torch.Tensor) -> tuple:
    return (t.is_contiguous(), t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last))


def canonical(t: torch.Tensor) -> torch.Tensor:
    """``t`` with every NaN replaced by the canonical NaN of its dtype."""
    if not t.is_floating_point():
        return t
    c = torch.tensor(CANONICAL_NAN[t.dtype], dtype=bits(t).dtype).view(t.dtype)
    return torch.where(torch.isnan(t), c, t)


def check(fn, *inputs, kernel_nan=True, exact=None, bound=None, stride_class=True, native_inputs=None):
    """Run ``fn(*inputs)`` natively and under repmode (strict) and check (a)-(e).

    ``exact``: a function of the inputs giving the exact expected outputs (list), compared bit
    for bit after mapping NaNs to the canonical NaN (raw bits when ``kernel_nan`` is False).
    ``bound``: a function ``(inputs, outputs)`` asserting accuracy itself. ``native_inputs``:
    the inputs native torch gets instead (same values, a layout it does not crash on). Returns
    the outputs (None when both sides raised)."""
    try:
        native, native_err = _flat(fn(*(native_inputs or inputs))), None
    except ERRORS as e:
        native, native_err = None, e
    with num_threads(1), repmode.enabled(strict=True):
        try:
            got = _flat(fn(*inputs))
        except ERRORS as e:
            # (a) a defined error is fine where torch refuses the same inputs
            assert native_err is not None, f"repmode raised {e!r} where native torch returns"
            hypothesis.event(f"both raise {type(native_err).__name__}")
            return None
    if native_err is not None:
        # torch refuses inputs repmode computes (seen: slow_conv2d's "grad_weight must be
        # contiguous" for some weight layouts); nothing native to compare, the other checks run
        hypothesis.event(f"native raises {type(native_err).__name__}, repmode computes")
        native = got
    # (d) shape, dtype, stride class
    assert len(got) == len(native)
    for i, (g, n) in enumerate(zip(got, native)):
        assert g.shape == n.shape and g.dtype == n.dtype, f"out[{i}]: {g.shape}/{g.dtype} vs native {n.shape}/{n.dtype}"
        if stride_class and g.numel() > 1:
            assert _stride_class(g) == _stride_class(n), \
                f"out[{i}] stride class {g.stride()} vs native {n.stride()} (shape {tuple(g.shape)})"
    # (c) threads and layout
    for threads in (2, 3):
        with num_threads(threads), repmode.enabled(strict=True):
            assert_bitwise_equal(got, _flat(fn(*inputs)), f"threads={threads}")
    laid = [contiguous_copy(x) for x in inputs]
    with num_threads(2), repmode.enabled(strict=True):
        again = _flat(fn(*laid))
    assert_bitwise_equal(got, again, "contiguous inputs")
    # (e) canonical NaNs
    if kernel_nan:
        for i, g in enumerate(got):
            if g.is_floating_point():
                assert_bitwise_equal(g, canonical(g), f"out[{i}] NaN pattern")
    # (b) accuracy
    if exact is not None:
        want = exact(*inputs)
        want = [canonical(w) if kernel_nan else w for w in want]
        assert_bitwise_equal(got, want, "exact reference")
    if bound is not None:
        bound(inputs, got)
    return got


def u_of(dtype) -> float:
    """Unit roundoff of the dtype repmode computes in (bf16/fp16 are widened to float32)."""
    return torch.finfo(torch.float64 if dtype == torch.float64 else torch.float32).eps / 2


def u_chain(dtype) -> float:
    """Unit roundoff for a chain of ops (autograd: the backward reads the forward's output, or a
    decomposition's steps): every op rounds once to the tensor dtype, so a bf16/fp16 chain carries
    errors of the narrow dtype's unit roundoff."""
    return torch.finfo(dtype).eps / 2


def assert_within(got: torch.Tensor, ref: torch.Tensor, tol: torch.Tensor, what: str = "", mag=None,
                  nops: int = 1) -> None:
    """|got − ref| ≤ tol where ref is finite and the output dtype can hold ref ± tol (+ one final
    rounding to a narrow output dtype and its subnormal spacing); NaN where ref is NaN.
    ``mag``: the magnitude of the op's intermediates (e.g. Σ|a||b|); where it is beyond the
    output dtype's range an intermediate may overflow by the documented order, so no bound.
    ``nops``: how many roundings make one output; each may underflow with an absolute error of up
    to one subnormal spacing of the compute dtype, which the relative bounds do not cover."""
    g = got.double()
    ref = ref.double().broadcast_to(g.shape)
    tol = tol.double().broadcast_to(g.shape)
    in_range = torch.ones_like(g, dtype=torch.bool)
    if mag is not None:
        # (NaN or inf in an input makes mag NaN/inf too: no bound, but see the NaN rule below)
        in_range = ~(mag.double().broadcast_to(g.shape) >= torch.finfo(got.dtype).max)
        tol = torch.where(in_range, tol, math.inf)
    fi = torch.finfo(got.dtype)
    if got.dtype in (torch.bfloat16, torch.float16):
        tol = tol + (fi.eps / 2) * ref.abs()
    fc = torch.finfo(torch.float64 if got.dtype == torch.float64 else torch.float32)
    tol = tol + fi.smallest_normal * fi.eps + nops * fc.smallest_normal * fc.eps
    # NaN where the reference is NaN, unless an intermediate left the range (an FMA chain may then
    # legitimately keep −inf where the float64 reference meets inf − inf)
    nan = torch.isnan(ref) & (in_range | torch.isnan(mag.double().broadcast_to(g.shape)) if mag is not None else True)
    assert torch.equal(torch.isnan(g)[nan], nan[nan]), f"{what}: not NaN where the reference is NaN"
    fin = torch.isfinite(ref) & torch.isfinite(tol) & (ref.abs() + tol < fi.max)
    if fin.any():
        err = (g[fin] - ref[fin]).abs()
        bad = ~(err <= tol[fin])
        if bad.any():
            i = int(bad.nonzero()[0])
            raise AssertionError(f"{what}: |got - ref| = {float(err[i]):.3e} > tol {float(tol[fin][i]):.3e} "
                                 f"(got {float(g[fin][i])!r}, ref {float(ref[fin][i])!r}); {int(bad.sum())} elements")


def f64(*ts):
    """float64 copies (contiguous: a reference's values do not depend on the layout, and torch's
    own kernels refuse some layouts, e.g. slow_conv2d's grad_weight)."""
    return [t.double().contiguous() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in ts]


# Every float64 is an integer multiple of 2^-1074, so integers at that scale hold any float64 input,
# integers at 2^-2148 any product of two and at 2^-3222 any α·(product): exact sums, rounded once.
_F64_SCALE = 1074


def _scaled_int(x: float) -> int:
    p, q = float(x).as_integer_ratio()  # q a power of two, at most 2^1074
    return p * ((1 << _F64_SCALE) // q)


def exact_addmm(t, a: torch.Tensor, b: torch.Tensor, beta: float = 0.0, alpha: float = 1.0) -> torch.Tensor:
    """β·t + α·(a @ b) as float64, each output the exact value rounded once (±inf past the range);
    ``a``, ``b``: (..., n, k) and (..., k, m) of any float dtype (widened exactly); ``t`` broadcast
    to (..., n, m), or None; β = 0 ignores ``t`` even where it is NaN or inf (torch's rule).

    The reference for float64 products, where native float64 kernels are no reference: they round
    every partial sum and (addmm) scale an operand by α first, which drops a subnormal term or turns
    α·max into inf and inf·0 into NaN. Outputs that meet an inf or NaN operand take the IEEE value
    of the plain float64 sum of products instead (NaN where a product is NaN, else the infinity)."""
    a64, b64 = a.double(), b.double()
    out_shape = torch.broadcast_shapes(a64.shape[:-2], b64.shape[:-2]) + (a64.shape[-2], b64.shape[-1])
    a64, b64 = a64.broadcast_to(out_shape[:-2] + a64.shape[-2:]), b64.broadcast_to(out_shape[:-2] + b64.shape[-2:])
    n, k, m = a64.shape[-2], a64.shape[-1], b64.shape[-1]
    batch = math.prod(out_shape[:-2])
    a3, b3 = a64.reshape(batch, n, k), b64.reshape(batch, k, m)
    use_t = t is not None and beta != 0
    t3 = t.double().broadcast_to(out_shape).reshape(batch, n, m) if use_t else None
    ieee = torch.zeros(batch, n, m, dtype=torch.float64)
    for l in range(k):  # the IEEE value where an operand is inf or NaN (any order gives the same NaN/inf)
        ieee = ieee + a3[:, :, l:l + 1] * b3[:, l:l + 1, :]
    ieee = alpha * ieee + (beta * t3 if use_t else 0.0)
    al, be = _scaled_int(alpha), _scaled_int(beta) if use_t else 0
    out, scale = ieee, 1 << (3 * _F64_SCALE)  # out starts as the IEEE values; finite outputs are replaced
    av, bv = a3.tolist(), b3.tolist()
    tv = t3.tolist() if use_t else None
    ai = [[[_scaled_int(x) if math.isfinite(x) else None for x in row] for row in mat] for mat in av]
    bi = [[[_scaled_int(x) if math.isfinite(x) else None for x in row] for row in mat] for mat in bv]
    for z in range(batch):
        for i in range(n):
            for j in range(m):
                terms = [(ai[z][i][l], bi[z][l][j]) for l in range(k)]
                tz = tv[z][i][j] if use_t else 0.0
                if any(x is None or y is None for x, y in terms) or not math.isfinite(tz):
                    continue  # keeps the IEEE value
                s = al * sum(x * y for x, y in terms)  # scale 2^-3222
                if use_t:
                    s += be * _scaled_int(tz) << _F64_SCALE
                try:
                    out[z, i, j] = s / scale  # int / int: correctly rounded
                except OverflowError:
                    out[z, i, j] = math.inf if s > 0 else -math.inf
    return out.reshape(out_shape)
