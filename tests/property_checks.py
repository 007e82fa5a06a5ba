"""The per-example checker of the property suites (tests/test_properties*.py), and the error
bounds they share. ``check`` runs one op natively and under repmode and asserts (a)-(e) of
tests/test_properties.py's docstring; ``assert_within`` is the float64-reference comparison."""
from __future__ import annotations

import math

import hypothesis  # the property suites import this module after pytest.importorskip("hypothesis")
import torch

import repmode
from conftest import assert_bitwise_equal, bits, num_threads
from strategies import CANONICAL_NAN, contiguous_copy

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
