"""Property-based tests (hypothesis) for training utilities, integer arithmetic and random numbers,
in the style of tests/properties/test_properties.py (read its docstring for (a)-(e)): optimizer steps in their
for-loop, foreach and fused forms; clip_grad_norm_/clip_grad_value_ and GradScaler's two ops;
integer +, −, ×, //, %, neg, abs, sum, cumsum, prod and arange; and the random ops under
``repmode.enabled(seed=s)``.

The checker is tests/support/property_checks.py; where one call of ``check`` does not fit (random values
have no float64 reference; an optimizer compares its forms with each other) the checks are written
out, keeping (a)-(e) in spirit.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from support import assert_bitwise_equal, num_threads  # noqa: E402
from support.property_checks import ERRORS, _flat, _stride_class, assert_within, canonical, check, u_chain, u_of  # noqa: E402
from support.strategies import _INT_VIEW, dtypes_of, lay_out, second_operand, tensors  # noqa: E402

import repmode  # noqa: E402

aten = torch.ops.aten


def _fresh(t: torch.Tensor) -> torch.Tensor:
    """A new tensor with ``t``'s shape, strides and bits (for ops that write into their inputs;
    the copy runs on an integer view, which keeps NaN payloads)."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
    if t.is_floating_point():
        out.view(_INT_VIEW[t.dtype]).copy_(t.view(_INT_VIEW[t.dtype]))
    else:
        out.copy_(t)
    return out


# ----------------------------------------------------------------------------- integers

INT_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "floor_divide": torch.floor_divide, "remainder": torch.remainder}


@given(data=st.data())
def test_integer_arithmetic(data):
    """Integer +, −, ×, floor_divide, remainder, neg, abs, sum, cumsum, prod and arange are exact
    two's-complement arithmetic (semantics "Ground rules", "Integer arithmetic and arange", "Edge
    cases"): equal to native torch bit for bit, wrap-around on overflow included (the strategies
    inject the dtype's min and max). A float arange is RN_T(RN64(i·step) + start)."""
    op = data.draw(st.sampled_from(sorted(INT_BINARY) + ["neg", "abs", "sum", "cumsum", "prod", "arange"]))
    dt = data.draw(st.sampled_from(dtypes_of(aten.add.Tensor, kinds=("int",))))
    if op == "arange":
        form = data.draw(st.sampled_from(["end", "start_end", "start_end_step"]))
        dtype = data.draw(st.sampled_from([None, torch.float32, torch.float64]
                                          + dtypes_of(aten.arange.start_step, kinds=("int",))))
        start, end = data.draw(st.integers(-60, 60)), data.draw(st.integers(-60, 60))
        step = data.draw(st.sampled_from([1, 2, 3, -1, -4, 7]))
        if dtype is not None and dtype.is_floating_point:
            start = start + data.draw(st.sampled_from([0.0, 0.25, 0.1]))
            step = step * data.draw(st.sampled_from([1.0, 0.5, 0.3]))
        kw = {} if dtype is None else {"dtype": dtype}
        if form == "end":
            fn = lambda: torch.arange(end, **kw)  # noqa: E731
            start, step = 0, 1
        elif form == "start_end":
            fn = lambda: torch.arange(start, end, **kw)  # noqa: E731
            step = 1
        else:
            fn = lambda: torch.arange(start, end, step, **kw)  # noqa: E731

        def exact():
            want = fn()  # native: the element count and, for integers, the values
            if want.is_floating_point():
                i = torch.arange(want.numel(), dtype=torch.int64).double()
                return [(i * float(step) + float(start)).to(want.dtype)]
            return [want]
        check(fn, exact=exact)
        return
    a = data.draw(tensors(dt, max_dims=3))
    if op in INT_BINARY:
        info = torch.iinfo(dt)
        b = second_operand(data, dt, a, [0, 1, -1, 3, -7, 100, info.max, info.min])
        f = INT_BINARY[op]
        fn = lambda x, y: f(x, y)  # noqa: E731
        check(fn, a, b, exact=lambda x, y: [f(x, y)])
        return
    if op in ("neg", "abs"):
        fn = torch.neg if op == "neg" else torch.abs
        check(fn, a, exact=lambda x: [fn(x)])
        return
    dims = [] if a.dim() == 0 else data.draw(st.lists(st.integers(0, a.dim() - 1), unique=True, max_size=a.dim()))
    keep = data.draw(st.booleans())
    out_dtype = data.draw(st.sampled_from([None, dt, torch.int64]))
    kw = {} if out_dtype is None else {"dtype": out_dtype}
    if op == "sum":
        fn = lambda x: torch.sum(x, dims, keepdim=keep, **kw) if dims else torch.sum(x, **kw)  # noqa: E731
    elif op == "prod":
        fn = lambda x: torch.prod(x, dims[0], keepdim=keep, **kw) if dims else torch.prod(x, **kw)  # noqa: E731
    else:
        d = dims[0] if dims else 0
        fn = lambda x: torch.cumsum(x, d, **kw)  # noqa: E731
    check(fn, a, exact=lambda x: [fn(x)])


# ----------------------------------------------------------------------------- random numbers

DEST_LAYOUTS = ("contiguous", "transposed", "sliced", "channels_last")


def _rng_run(seed: int, threads: int, fn, *args) -> list[torch.Tensor]:
    with num_threads(threads), repmode.enabled(strict=True, seed=seed):
        return _flat(fn(*args))


def _dest(values: torch.Tensor, layout: str) -> torch.Tensor:
    return lay_out(_fresh(values.contiguous()), layout)


@given(data=st.data())
def test_random_ops(data):
    """rand/randn/randint/randperm/bernoulli/native_dropout (and its backward)/normal/uniform_/
    exponential_/multinomial under ``repmode.enabled(seed=s)``. No float64 reference exists for
    random values, so (b) is the documented range or form of each op; (c): the same bits at 1, 2
    and 3 threads, when re-run with the seed, and — element i of the output comes from the stream
    position of i in logical row-major order, whatever the strides (semantics "Random numbers") —
    for a destination or input stored contiguous and in the drawn layout; (d) dtype, shape and
    stride class as native torch's (which draws from its own generator); (e) NaNs canonical."""
    seed = data.draw(st.integers(0, 2**63 - 1))
    op = data.draw(st.sampled_from(["rand", "randn", "randint", "randperm", "bernoulli", "bernoulli_",
                                    "dropout", "normal", "normal_", "uniform_", "exponential_", "multinomial"]))
    shape = tuple(data.draw(st.lists(st.integers(0, 5), max_size=4)))
    if data.draw(st.integers(0, 5)) == 0:
        # big enough for the C++ fill to split its blocks over threads (kMinParallelWork)
        shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(11000, 13000)))
    layout = data.draw(st.sampled_from([l for l in DEST_LAYOUTS if l != "channels_last" or len(shape) == 4]))
    form = data.draw(st.sampled_from(["functional", "out"]))
    inputs = []  # tensors the op reads (also compared in a contiguous layout); a destination goes first
    dest_layout_matters = False
    if op in ("rand", "randn"):
        dt = data.draw(st.sampled_from(dtypes_of(aten.rand.default)))
        f = torch.rand if op == "rand" else torch.randn
        if form == "out":
            inputs, dest_layout_matters = [_dest(torch.zeros(shape, dtype=dt), layout)], True
            fn = lambda o: f(shape, out=_fresh(o))  # noqa: E731
        else:
            like = data.draw(st.booleans())
            if like:
                inputs = [_dest(torch.zeros(shape, dtype=dt), layout)]
                fn = (lambda x: torch.rand_like(x)) if op == "rand" else (lambda x: torch.randn_like(x))  # noqa: E731
            else:
                fn = lambda: f(shape, dtype=dt)  # noqa: E731
    elif op == "randint":
        dt = data.draw(st.sampled_from(dtypes_of(aten.randint.low)))
        lo = data.draw(st.integers(-20, 20)) if dt not in (torch.uint8,) else data.draw(st.integers(0, 20))
        hi = lo + data.draw(st.integers(1, 60))
        if dt in (torch.int8,):
            hi = min(hi, 127)
        if form == "out":
            inputs, dest_layout_matters = [_dest(torch.zeros(shape, dtype=dt), layout)], True
            fn = lambda o: torch.randint(lo, hi, shape, out=_fresh(o))  # noqa: E731
        elif data.draw(st.booleans()):
            inputs = [_dest(torch.zeros(shape, dtype=dt), layout)]
            fn = lambda x: torch.randint_like(x, lo, hi)  # noqa: E731
        else:
            fn = lambda: torch.randint(lo, hi, shape, dtype=dt)  # noqa: E731
    elif op == "randperm":
        dt = data.draw(st.sampled_from([torch.int64, torch.int32, torch.float32, torch.float64]))
        n = data.draw(st.integers(0, 40))
        fn = lambda: torch.randperm(n, dtype=dt)  # noqa: E731
    elif op in ("bernoulli", "bernoulli_"):
        dt = data.draw(st.sampled_from(dtypes_of(aten.bernoulli.p, kinds=("float",))))
        p = data.draw(st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]))
        x = _dest(torch.zeros(shape, dtype=dt), layout)
        tensor_p = data.draw(st.booleans())
        pt = data.draw(tensors(dt, shape=shape, specials=False, positive=True, layouts=DEST_LAYOUTS)).clamp(0, 1)
        if op == "bernoulli":
            inputs = [pt] if tensor_p else [x]
            fn = (lambda q: torch.bernoulli(q)) if tensor_p else (lambda t: torch.bernoulli(t, p))  # noqa: E731
        else:
            inputs, dest_layout_matters = ([x, pt] if tensor_p else [x]), True
            fn = (lambda t, q: _fresh(t).bernoulli_(q)) if tensor_p else (lambda t: _fresh(t).bernoulli_(p))  # noqa: E731
    elif op == "dropout":
        dt = data.draw(st.sampled_from(dtypes_of(aten.native_dropout.default, kinds=("float",))))
        p = data.draw(st.sampled_from([0.0, 0.2, 0.5, 0.75, 1.0]))
        x = data.draw(tensors(dt, shape=shape, layouts=DEST_LAYOUTS))
        g = data.draw(tensors(dt, shape=shape, specials=False, layouts=DEST_LAYOUTS))
        inputs = [x, g]

        def fn(t, gg):
            t = t.detach().requires_grad_(True)
            y, mask = aten.native_dropout(t, p, True)
            (gt,) = torch.autograd.grad(y, t, gg)
            return y, mask, gt
    elif op in ("normal", "normal_"):
        dt = data.draw(st.sampled_from(dtypes_of(aten.normal.Tensor_Tensor)))
        mean = data.draw(st.sampled_from([0.0, -2.5, 1e3]))
        std = data.draw(st.sampled_from([1.0, 0.0, 3.0, 1e-3]))
        if op == "normal_":
            inputs, dest_layout_matters = [_dest(torch.zeros(shape, dtype=dt), layout)], True
            fn = lambda o: _fresh(o).normal_(mean, std)  # noqa: E731
        else:
            which = data.draw(st.sampled_from(["float_float", "tensor_float", "float_tensor", "tensor_tensor"]))
            mt = data.draw(tensors(dt, shape=shape, specials=False, layouts=DEST_LAYOUTS))
            st_ = data.draw(tensors(dt, shape=shape, specials=False, positive=True, layouts=DEST_LAYOUTS))
            out = [_dest(torch.zeros(shape, dtype=dt), layout)] if form == "out" else []
            kw = (lambda o: {"out": _fresh(o[0])} if o else {})  # noqa: E731
            dest_layout_matters = form == "out"
            if which == "float_float":
                inputs = out
                fn = lambda *o: torch.normal(mean, std, shape, **(kw(o) if o else {"dtype": dt}))  # noqa: E731
            elif which == "tensor_float":
                inputs = out + [mt]
                fn = lambda *a: torch.normal(a[-1], std, **kw(a[:-1]))  # noqa: E731
            elif which == "float_tensor":
                inputs = out + [st_]
                fn = lambda *a: torch.normal(mean, a[-1], **kw(a[:-1]))  # noqa: E731
            else:
                inputs = out + [mt, st_]
                fn = lambda *a: torch.normal(a[-2], a[-1], **kw(a[:-2]))  # noqa: E731
    elif op in ("uniform_", "exponential_"):
        dt = data.draw(st.sampled_from(dtypes_of(aten.uniform_.default)))
        inputs, dest_layout_matters = [_dest(torch.zeros(shape, dtype=dt), layout)], True
        lo = data.draw(st.sampled_from([0.0, -1.0, 10.0, -1e-3]))
        hi = lo + data.draw(st.sampled_from([1.0, 0.5, 1e3]))
        lam = data.draw(st.sampled_from([1.0, 0.5, 7.0]))
        if op == "uniform_":
            fn = lambda o: _fresh(o).uniform_(lo, hi)  # noqa: E731
        else:
            fn = lambda o: _fresh(o).exponential_(lam)  # noqa: E731
    else:  # multinomial
        dt = data.draw(st.sampled_from(dtypes_of(aten.multinomial.default)))
        rows, cats = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 7))
        w = data.draw(tensors(dt, shape=(rows, cats), specials=False, positive=True,
                              layouts=("contiguous", "transposed", "sliced")))
        zero = data.draw(st.lists(st.integers(0, cats - 1), max_size=cats - 1, unique=True))
        w = _fresh(w)
        w[:, zero] = 0
        w[:, [c for c in range(cats) if c not in zero][0]] += 1  # at least one positive per row
        replacement = data.draw(st.booleans())
        k = data.draw(st.integers(1, 6 if replacement else cats - len(zero)))
        inputs = [w]
        fn = lambda t: torch.multinomial(t, k, replacement)  # noqa: E731

    # (a) and (d): native torch (its own generator) for dtype, shape and stride class
    try:
        native, native_err = _flat(fn(*inputs)), None
    except ERRORS as e:
        native, native_err = None, e
    try:
        got = _rng_run(seed, 1, fn, *inputs)
    except ERRORS as e:
        assert native_err is not None, f"repmode raised {e!r} where native torch returns"
        return
    assert native_err is None, f"native raised {native_err!r} where repmode returns"
    assert len(got) == len(native)
    for i, (g_, n_) in enumerate(zip(got, native)):
        if op == "dropout" and i == 1 and g_.numel() == 0:
            # native torch 2.13's CPU native_dropout returns a float mask (not bool) for an empty
            # input; repmode keeps the schema's bool
            n_ = n_.to(torch.bool)
        assert g_.shape == n_.shape and g_.dtype == n_.dtype, \
            f"out[{i}]: {g_.shape}/{g_.dtype} vs {n_.shape}/{n_.dtype}"
        if g_.numel() > 1:
            assert _stride_class(g_) == _stride_class(n_), f"out[{i}] stride {g_.stride()} vs native {n_.stride()}"
    # (c) re-run with the seed, threads, contiguous layout of every tensor
    assert_bitwise_equal(got, _rng_run(seed, 1, fn, *inputs), "same seed again")
    for threads in (2, 3):
        assert_bitwise_equal(got, _rng_run(seed, threads, fn, *inputs), f"threads={threads}")
    laid = [_fresh(t.contiguous()) for t in inputs]
    assert_bitwise_equal(got, _rng_run(seed, 2, fn, *laid),
                         "contiguous destination" if dest_layout_matters else "contiguous inputs")
    # (e) canonical NaNs (a NaN here can only come from an input, e.g. dropout of a NaN)
    for i, g_ in enumerate(got):
        if g_.is_floating_point():
            assert_bitwise_equal(g_, canonical(g_), f"out[{i}] NaN pattern")
    # (b) documented ranges and forms
    y = got[0]
    if op == "rand":
        assert bool(((y >= 0) & (y < 1)).all()), "rand outside [0, 1)"
    elif op == "randn" or op in ("normal", "normal_"):
        assert not bool(torch.isnan(y).any()), f"{op} gave NaN"
        if op == "normal_" and std == 0:
            assert bool((y == torch.tensor(mean, dtype=dt)).all()), "normal_ with std 0 is the mean"
    elif op == "randint":
        assert bool(((y >= lo) & (y < hi)).all()), f"randint outside [{lo}, {hi})"
    elif op == "randperm":
        assert torch.equal(torch.sort(y.double()).values, torch.arange(n, dtype=torch.float64)), "not a permutation"
    elif op in ("bernoulli", "bernoulli_"):
        assert bool(((y == 0) | (y == 1)).all()), "bernoulli outside {0, 1}"
        if not tensor_p and p in (0.0, 1.0):
            assert bool((y == p).all()), f"bernoulli(p={p})"
    elif op == "dropout":
        out, mask, gx = got
        assert mask.dtype == torch.bool
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        factor = torch.where(mask, torch.tensor(scale, dtype=torch.float64).to(dt), torch.zeros((), dtype=dt))
        assert_bitwise_equal(out, canonical(x * factor), "dropout output: x·(1/(1−p) or 0)")
        assert_bitwise_equal(gx, canonical(g * factor), "dropout backward: g·(1/(1−p) or 0)")
        if p == 0:
            assert bool(mask.all())
        if p == 1:
            assert not bool(mask.any())
    elif op == "uniform_":
        # from + u·(to − from) with u < 1, rounded once to the dtype: may round up to `to`
        assert bool(((y >= torch.tensor(lo, dtype=dt)) & (y <= torch.tensor(hi, dtype=dt))).all()), "uniform_ range"
    elif op == "exponential_":
        assert bool(((y >= 0) & torch.isfinite(y)).all()), "exponential_ outside [0, inf)"
    elif op == "multinomial":
        assert bool(((y >= 0) & (y < cats)).all())
        assert not bool(torch.isin(y, torch.tensor(zero, dtype=torch.int64)).any()), "drew a zero-weight category"
        if not replacement:
            for r in range(rows):
                assert y[r].unique().numel() == k, "without replacement: repeated category"


# ----------------------------------------------------------------------------- clipping, GradScaler

GRAD_LAYOUTS = ("contiguous", "transposed", "sliced", "channels_last")  # written in place: not expanded


def _with_grads(gs, dt):
    """Parameters (zeros: only their .grad is read) carrying fresh copies of ``gs``."""
    ps = []
    for g in gs:
        p = torch.zeros(g.shape, dtype=dt)
        p.grad = _fresh(g)
        ps.append(p)
    return ps


@given(data=st.data())
def test_clip_grad_and_grad_scaler(data):
    """clip_grad_norm_ (norm 2, 1, inf; foreach on and off; error_if_nonfinite), clip_grad_value_
    and GradScaler's two ops (semantics "Training utilities", "Mixed precision").

    clip_grad_norm_: each gradient's norm is a sum of n positive terms (|g| or g², each rounded
    once), so within (n + 2)·u of the exact value (γ_n for any order of positive terms; the square
    root halves the relative error and adds u); the total norm of k such norms within
    (N + k + 4)·u, N the largest gradient; the inf-norm is exact (a maximum of exact |g|).
    clip_coef = max_norm/(total + 1e-6), clamped to 1, adds two roundings; each gradient is
    multiplied by it once: within (N + k + 8)·u·|g·coef| (bf16/fp16: every step rounds to the
    dtype, u = its unit roundoff). Where a square or a partial sum leaves the dtype's range there is
    no bound (the float64 reference stays finite). The foreach and for-loop forms give the same
    bits (semantics "Optimizers": foreach ops are their single-tensor op in list order).
    clip_grad_value_ is a clamp, and GradScaler's unscale (one multiplication per element, an
    exact non-finite test) and scale update (one float32 multiplication) are exact: native
    torch's values, NaN canonical."""
    what = data.draw(st.sampled_from(["clip_norm", "clip_value", "unscale", "update_scale"]))
    if what == "update_scale":
        scale = torch.tensor([data.draw(st.sampled_from([65536.0, 1.0, 3.0e38, 1e-30, 1e-45, 0.75]))])
        interval = data.draw(st.integers(1, 3))
        tracker = torch.tensor([data.draw(st.integers(0, interval - 1))], dtype=torch.int32)
        found = torch.tensor([data.draw(st.sampled_from([0.0, 1.0]))])
        growth = data.draw(st.sampled_from([2.0, 1.5, 1e10, 1.1]))
        backoff = data.draw(st.sampled_from([0.5, 0.125, 0.3]))

        def fn(s, t, f):
            s, t = _fresh(s), _fresh(t)
            torch._amp_update_scale_(s, t, f, growth, backoff, interval)
            return s, t
        def exact(s, t, f):
            # semantics "Mixed precision": one float32 multiplication by the factor rounded to
            # float32. (Native torch 2.13's CPU kernel multiplies in double and rounds once, so it
            # differs where the factor is inexact in float32: 3e38·1.1, backoff 0.3.)
            s32 = np.float32(s.item())
            with np.errstate(over="ignore"):
                if f.item() != 0:
                    return [torch.tensor([float(s32 * np.float32(backoff))]), torch.zeros(1, dtype=torch.int32)]
                if t.item() + 1 == interval:
                    grown = s32 * np.float32(growth)
                    return [torch.tensor([float(grown if np.isfinite(grown) else s32)]),
                            torch.zeros(1, dtype=torch.int32)]
            return [s.clone(), t + 1]
        check(fn, scale, tracker, found, exact=exact)
        return
    op = {"clip_norm": aten.linalg_vector_norm.default, "clip_value": aten.clamp.default,
          "unscale": aten._amp_foreach_non_finite_check_and_unscale_.default}[what]
    dt = data.draw(st.sampled_from(dtypes_of(op)))
    k = data.draw(st.integers(1, 3))
    gs = [data.draw(tensors(dt, max_dims=4, layouts=GRAD_LAYOUTS)) for _ in range(k)]
    if what == "unscale":
        found = torch.tensor([0.0])
        inv = torch.tensor(data.draw(st.sampled_from([1 / 65536, 0.5, 2.0**-24, 3.0, 1e-3])))
        inv = inv.reshape(data.draw(st.sampled_from([(), (1,)])))  # GradScaler's is 0-dim; torch takes both

        def fn(f, s, *g):
            f, g = _fresh(f), [_fresh(x) for x in g]
            torch._amp_foreach_non_finite_check_and_unscale_(g, f, s)
            return [f] + g
        check(fn, found, inv, *gs, exact=lambda *a: fn(*a))
        return
    foreach = data.draw(st.booleans())
    if what == "clip_value":
        v = data.draw(st.sampled_from([0.5, 1e-3, 10.0, math.inf]))

        def fn(*g):
            ps = _with_grads(g, dt)
            torch.nn.utils.clip_grad_value_(ps, v, foreach=foreach)
            return [p.grad for p in ps]
        got = check(fn, *gs, exact=lambda *g: [x.clamp(-v, v) for x in g])
    else:
        nt = data.draw(st.sampled_from([2.0, 1.0, math.inf]))
        max_norm = data.draw(st.sampled_from([1.0, 0.05, 1e3]))
        err = data.draw(st.booleans())
        sq = sum(float((x.double().abs() ** (2 if nt == 2 else 1)).sum()) for x in gs)  # inf: past float64 too
        if err and not sq < torch.finfo(dt).max:
            # the documented 2-norm/1-norm is the plain sum of g² (|g|) in the compute dtype, "no
            # scaling" (semantics "Reductions"), so it overflows to inf where native torch's norm
            # can stay finite (it takes |g| for a one-element gradient, e.g. float64's max): repmode
            # then raises error_if_nonfinite's error where native does not, by design. Such draws
            # run without error_if_nonfinite.
            err = False

        def fn(*g):
            ps = _with_grads(g, dt)
            total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=nt, error_if_nonfinite=err,
                                                   foreach=foreach)
            return [total] + [p.grad for p in ps]

        def bound(inp, out):
            g64 = [x.double() for x in inp]
            norms = torch.stack([torch.linalg.vector_norm(x, nt) for x in g64])
            total = torch.linalg.vector_norm(norms, nt)
            coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
            big = max([x.numel() for x in g64])
            u = u_chain(dt) * (2 if dt == torch.float64 else 1)
            # the largest intermediate: Σ g² (norm 2) or Σ |g| (norm 1) over all gradients
            mag = sum(((x.abs() ** (2 if nt == 2 else 1)).sum() for x in g64), torch.tensor(0.0, dtype=torch.float64))
            if nt == math.inf:
                mag = total
            # squares that underflow: each an absolute error ≤ the compute dtype's subnormal
            # spacing η, so the sum ≤ (N·k)·η and its square root ≤ sqrt(N·k·η) (no scaling)
            fc = torch.finfo(torch.float64 if dt == torch.float64 else torch.float32)
            under = math.sqrt(big * k * fc.smallest_normal * fc.eps) if nt == 2 else 0.0
            ttol = 0 * total if nt == math.inf else (big + k + 4) * u * total + under
            assert_within(out[0], total, ttol, f"total {nt}-norm", mag=mag, nops=big + k + 4)
            for i, x in enumerate(g64):
                ref = x * coef
                # coef = max_norm/(total + 1e-6): the total's absolute error moves it relatively
                # by at most under/(total + 1e-6)
                gtol = ((big + k + 8) * u + under / (total + 1e-6)) * ref.abs()
                assert_within(out[1 + i], ref, gtol, f"clipped grad {i}",
                              mag=mag.expand(x.shape), nops=big + k + 8)
        got = check(fn, *gs, bound=bound)
    if got is not None:
        # foreach and for-loop forms: the same bits
        foreach = not foreach
        with num_threads(2), repmode.enabled(strict=True):
            other = _flat(fn(*gs))
        assert_bitwise_equal(got, other, "foreach vs for-loop")


# ----------------------------------------------------------------------------- optimizers

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
              "rmsprop": torch.optim.RMSprop, "adagrad": torch.optim.Adagrad}
FUSED = ("sgd", "adam", "adamw", "adagrad")  # torch has no fused RMSprop


def _hyper(data, name):
    lr = data.draw(st.sampled_from([0.1, 1e-3]))
    wd = data.draw(st.sampled_from([0.0, 0.01]))
    hp = dict(lr=lr, weight_decay=wd, maximize=data.draw(st.booleans()))
    if name == "sgd":
        mom = data.draw(st.sampled_from([0.0, 0.9]))
        nesterov = mom > 0 and data.draw(st.booleans())
        dampening = 0.0 if nesterov else data.draw(st.sampled_from([0.0, 0.1]))
        hp.update(momentum=mom, nesterov=nesterov, dampening=dampening)
    elif name in ("adam", "adamw"):
        hp.update(betas=data.draw(st.sampled_from([(0.9, 0.999), (0.8, 0.9)])),
                  eps=data.draw(st.sampled_from([1e-8, 1e-3])), amsgrad=data.draw(st.booleans()))
    elif name == "rmsprop":
        hp.update(alpha=data.draw(st.sampled_from([0.99, 0.9])), eps=data.draw(st.sampled_from([1e-8, 1e-3])),
                  momentum=data.draw(st.sampled_from([0.0, 0.9])), centered=data.draw(st.booleans()))
    else:
        hp.update(lr_decay=data.draw(st.sampled_from([0.0, 0.1])), eps=data.draw(st.sampled_from([1e-10, 1e-6])),
                  initial_accumulator_value=data.draw(st.sampled_from([0.0, 0.1])))
    return hp


def _optimize(name, form, hp, ps, steps):
    """``len(steps)`` steps of the optimizer on fresh copies of ``ps`` (gradients ``steps[t]``);
    returns the parameters and, per step, the optimizer's state after it (float64 reference)."""
    params = [_fresh(p).requires_grad_(True) for p in ps]
    opt = OPTIMIZERS[name](params, **hp, **({"foreach": False} if form == "for" else {form: True}))
    states = []
    for gs in steps:
        for p, g in zip(params, gs):
            p.grad = _fresh(g)
        opt.step()
        states.append(([p.detach().clone() for p in params],
                       [{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in opt.state[p].items()}
                        for p in params]))
    return [p.detach() for p in params], states


def _magnitude(name, hp, p0, gs, states):
    """Per element of one parameter: Σ_t (|p_{t−1}| + lr·A_t) + |p_T|, A_t a bound on the step's
    |update| computed from the float64 reference state with every signed sum replaced by the sum
    of magnitudes (so the forward error of each rounding is ≤ u·(that magnitude)); and the
    largest intermediate (squares of gradients) for the range rule."""
    lr, wd = hp["lr"], hp["weight_decay"]
    fc = torch.finfo(torch.float32)
    eta = 4 * fc.smallest_normal * fc.eps  # underflow of the state's products (absolute)
    m = torch.zeros_like(p0)
    buf = torch.zeros_like(p0)
    p_prev = p0.abs()
    tot = p0.abs().clone()
    inter = torch.zeros_like(p0)
    for t, (g, (p_t, st_)) in enumerate(zip(gs, states), start=1):
        ge = g.abs() + wd * p_prev
        inter = inter + 2 * ge
        if name == "sgd":
            mom = hp["momentum"]
            buf = ge if t == 1 else mom * buf + ge
            a = (ge + mom * buf if hp["nesterov"] else buf) if mom else ge
        elif name in ("adam", "adamw"):
            b1, b2 = hp["betas"]
            if name == "adamw":
                ge = g.abs()
            m = 2 * m + ge  # lerp(m, g, 1−β1) = m + (1−β1)(g − m): ≤ 2|m| + |g| in magnitude
            v = st_["max_exp_avg_sq" if hp["amsgrad"] else "exp_avg_sq"]
            den = v.sqrt() / math.sqrt(1 - b2 ** t) + hp["eps"]
            a = (m + eta) / (1 - b1 ** t) / den
        elif name == "rmsprop":
            sq = st_["square_avg"]
            if hp["centered"]:
                ga = st_["grad_avg"]
                x = sq - ga * ga
                # sq − ga² has relative error ≤ c·u·κ, κ = (sq + ga²)/x; the square root halves it
                kap = torch.where(x > 0, (sq + ga * ga) / x.clamp_min(1e-300), 0.0)
                den = x.clamp_min(0).sqrt() + hp["eps"]
            else:
                kap = torch.zeros_like(sq)
                den = sq.sqrt() + hp["eps"]
            a = (ge + eta) / den * (1 + kap)
            if hp["momentum"]:
                buf = hp["momentum"] * buf + a
                a = buf
        else:
            den = st_["sum"].sqrt() + hp["eps"]
            a = (ge + eta) / den
        step_lr = lr / (1 + (t - 1) * hp["lr_decay"]) if name == "adagrad" else lr
        tot = tot + p_prev + step_lr * a + p_t.abs()
        p_prev = p_t.abs()
    return tot, inter if name == "sgd" else inter * inter


@given(data=st.data())
def test_optimizer_steps(data):
    """One or two steps of SGD/Adam/AdamW/RMSprop/Adagrad in their for-loop, foreach and fused
    forms (semantics "Optimizers", "Training utilities").

    Bits: foreach equals for-loop for SGD, Adam, AdamW and RMSprop; fused equals for-loop for SGD,
    Adam, AdamW and Adagrad (foreach Adagrad multiplies by −lr first: only the bound). The same
    bits at 1, 2 and 3 threads and for parameters and gradients stored contiguous.

    Accuracy against torch's for-loop step in float64: one step is at most ~12 roundings (wd add,
    lerp/mul+addcmul, sqrt, division, eps add, addcdiv's three) plus ~4 Python scalars rounded to
    float32, each within u of a quantity bounded by the step's magnitude (``_magnitude``: the
    update with signed sums replaced by sums of magnitudes; the centered RMSprop denominator
    sqrt(sq − ga²) carries its condition κ). Errors of the state and of p carry into the next step
    with factors ≤ 2, so |p_T − ref| ≤ 32·T·u·M (float64: the reference has the same error, 2×)."""
    name = data.draw(st.sampled_from(sorted(OPTIMIZERS)))
    forms = ["for", "foreach"] + (["fused"] if name in FUSED else [])
    form = data.draw(st.sampled_from(forms))
    dt = data.draw(st.sampled_from([torch.float32, torch.float64]))
    hp = _hyper(data, name)
    k = data.draw(st.integers(1, 2))
    # now and then one parameter big enough for the elementwise kernels to split over threads
    big = data.draw(st.integers(0, 7)) == 0
    ps = [data.draw(tensors(dt, shape=(2, 17000) if big and i == 0 else None, max_dims=3, max_side=4,
                            specials=False, layouts=GRAD_LAYOUTS)) for i in range(k)]
    T = data.draw(st.integers(1, 2))
    steps = [[data.draw(tensors(dt, shape=p.shape, layouts=GRAD_LAYOUTS)) for p in ps] for _ in range(T)]
    flat_in = ps + [g for gs in steps for g in gs]

    def run(*ts):
        return _optimize(name, form, hp, list(ts[:k]), [list(ts[k + i * k:k + (i + 1) * k]) for i in range(T)])[0]

    # (a) native torch: repmode may not raise where it returns
    try:
        native, native_err = run(*flat_in), None
    except ERRORS as e:
        native, native_err = None, e
    try:
        with num_threads(1), repmode.enabled(strict=True):
            got = run(*flat_in)
    except ERRORS as e:
        assert native_err is not None, f"repmode raised {e!r} where native torch returns"
        hypothesis.event(f"both raise {type(native_err).__name__}")
        return
    if native_err is not None:
        hypothesis.event(f"native raises {type(native_err).__name__}, repmode computes")
    # (d) parameters keep shape, dtype and strides (updated in place), as native torch's
    for i, (g_, p) in enumerate(zip(got, native or got)):
        assert g_.shape == p.shape and g_.dtype == p.dtype and g_.stride() == p.stride() == ps[i].stride()
    # (c) threads and contiguous layout
    for threads in (2, 3):
        with num_threads(threads), repmode.enabled(strict=True):
            assert_bitwise_equal(got, run(*flat_in), f"threads={threads}")
    with num_threads(2), repmode.enabled(strict=True):
        assert_bitwise_equal(got, run(*[_fresh(t.contiguous()) for t in flat_in]), "contiguous inputs")
    # forms documented to give the for-loop bits
    if form != "for" and not (name == "adagrad" and form == "foreach"):
        with num_threads(2), repmode.enabled(strict=True):
            loop = _optimize(name, "for", hp, ps, steps)[0]
        assert_bitwise_equal(got, loop, f"{form} vs for-loop")
    # (e) canonical NaNs
    for i, g_ in enumerate(got):
        assert_bitwise_equal(g_, canonical(g_), f"param[{i}] NaN pattern")
    # (b) the float64 reference step
    p64 = [p.double().contiguous() for p in ps]
    g64 = [[g.double().contiguous() for g in gs] for gs in steps]
    ref, states = _optimize(name, "for", hp, p64, g64)
    u = u_of(dt) * (2 if dt == torch.float64 else 1)
    for i in range(k):
        mag, inter = _magnitude(name, hp, p64[i], [gs[i] for gs in g64],
                                [(s[0][i], s[1][i]) for s in states])
        assert_within(got[i], ref[i], 32 * T * u * mag, f"{name} {form} param[{i}]", mag=inter, nops=16 * T)
