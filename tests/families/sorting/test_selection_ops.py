"""mode, unique (all forms), searchsorted, bucketize, isin, cummax/cummin, aminmax, count_nonzero,
nonzero_static and logcumsumexp: equal to native torch where its result is unique, following the rules
of docs/semantics.md "Sorting and selection" where it is not, the same bits at 1 and 2 threads and for
every layout; logcumsumexp against an mpmath reference next to native torch."""
from __future__ import annotations

import mpmath
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant
from support.helpers import num_threads

import repmode

nan = float("nan")
aten = torch.ops.aten
DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8)


def _native_and_repmode(fn):
    want = fn()
    with repmode.enabled(strict=True):
        got = fn()
    return got, want


def _selections(x):
    """Ops whose torch result is unique on inputs without NaN (ties broken by a fixed rule in torch too)."""
    sorted_rows = torch.sort(x, 1)[0]
    return {
        "unique": lambda: torch._unique2(x, True, True, True),
        "unique_no_inverse": lambda: torch._unique2(x, True, False, True),
        "unique_no_counts": lambda: torch._unique2(x, True, True, False),
        "unique_py": lambda: torch.unique(x, return_inverse=True),
        "unique_dim0": lambda: torch.unique(x, dim=0, return_inverse=True, return_counts=True),
        "unique_dim1": lambda: torch.unique(x, dim=1, return_inverse=True, return_counts=True),
        "unique_consecutive": lambda: torch.unique_consecutive(x, return_inverse=True, return_counts=True),
        "unique_consecutive_dim": lambda: torch.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True),
        "searchsorted_rows": lambda: torch.searchsorted(sorted_rows, x, right=True),
        "searchsorted_left_int32": lambda: torch.searchsorted(torch.sort(x.flatten())[0], x, out_int32=True),
        "searchsorted_side_sorter": lambda: torch.searchsorted(x[0], x, side="right", sorter=torch.argsort(x[0])),
        "searchsorted_scalar": lambda: torch.searchsorted(sorted_rows[0], 3),
        "bucketize": lambda: torch.bucketize(x, sorted_rows[1]),
        "bucketize_right": lambda: torch.bucketize(x, sorted_rows[1], right=True, out_int32=True),
        "bucketize_scalar": lambda: torch.bucketize(2, sorted_rows[1]),
        "isin": lambda: torch.isin(x, x[0, :3]),
        "isin_invert": lambda: torch.isin(x, x[1], invert=True),
        "isin_scalar": lambda: torch.isin(x, 2),
        "isin_scalar_element": lambda: torch.isin(2, x),
        "_unique": lambda: aten._unique.default(x, True, True),
        "unique_dim_consecutive": lambda: aten.unique_dim_consecutive.default(x, 1, True, True),
        "cummax": lambda: torch.cummax(x, 1),
        "cummin": lambda: torch.cummin(x, 0),
        "aminmax_dim": lambda: torch.aminmax(x, dim=1, keepdim=True),
        "aminmax": lambda: torch.aminmax(x),
        "count_nonzero": lambda: torch.count_nonzero(x, dim=(0, 1)),
        "count_nonzero_dim": lambda: torch.count_nonzero(x, dim=1),
        "nonzero_static": lambda: torch.nonzero_static(x, size=x.numel() + 3, fill_value=-7),
    }


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_exact_selections_equal_native_torch_in_every_dtype(dtype, rng):
    x = torch.randint(0, 6, (6, 11), generator=rng).to(dtype)  # many ties and repeated rows of values
    x[3] = x[1]  # a repeated row for unique(dim=0)
    for name, fn in _selections(x).items():
        got, want = _native_and_repmode(fn)
        assert_bitwise_equal(tuple(got) if isinstance(got, tuple) else got,
                             tuple(want) if isinstance(want, tuple) else want, f"{name} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mode_equals_native_torch_smallest_mode_at_its_last_index(dtype, rng):
    x = torch.randint(0, 5, (7, 13), generator=rng).to(dtype)
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        got, want = _native_and_repmode(lambda: torch.mode(x, dim, keepdim))
        assert_bitwise_equal(tuple(got), tuple(want), f"mode {dtype} dim={dim}")
    with repmode.enabled(strict=True):
        v, i = torch.mode(torch.tensor([3, 1, 3, 1, 2]).to(dtype))
    assert (v.item(), i.item()) == (1, 3)  # two modes: the smaller value, at its last index


def test_mode_counts_every_nan_as_one_value_and_signed_zeros_as_equal():
    x = torch.tensor([[nan, 1.0, nan, 1.0, 2.0, nan], [-0.0, 0.0, 1.0, 1.0, -0.0, 5.0]])
    with repmode.enabled(strict=True):
        values, indices = torch.mode(x, 1)
    assert torch.isnan(values[0]) and indices[0].item() == 5  # three NaNs: the mode, at the last NaN
    assert indices[1].item() == 4 and str(values[1].item()) == "-0.0"  # three zeros; the element at index 4


def test_unique_merges_signed_zeros_keeps_each_nan_and_takes_the_first_occurrences_bits():
    x = torch.tensor([1.0, nan, -0.0, 0.0, nan, 1.0, -2.0])
    got, want = _native_and_repmode(lambda: torch._unique2(x, True, True, True))
    assert_bitwise_equal(tuple(got), tuple(want), "unique with NaN and signed zeros")
    assert got[0].tolist()[:3] == [-2.0, -0.0, 1.0] and str(got[0][1].item()) == "-0.0"
    assert got[2].tolist() == [1, 2, 2, 1, 1]  # every NaN its own value, in index order
    got, want = _native_and_repmode(lambda: torch.unique_consecutive(x, return_inverse=True, return_counts=True))
    assert_bitwise_equal(tuple(got), tuple(want), "unique_consecutive with NaN and signed zeros")


def test_unique_sorted_false_returns_the_sorted_result():
    x = torch.tensor([5, 3, 5, 1, 3, 9])
    with repmode.enabled(strict=True):
        values, inverse, counts = torch._unique2(x, False, True, True)
    assert values.tolist() == [1, 3, 5, 9] and counts.tolist() == [1, 2, 2, 1]
    assert torch.equal(values[inverse], x)


def test_unique_dim_orders_rows_lexicographically_and_keeps_rows_with_nan_apart():
    x = torch.tensor([[2.0, 1.0], [1.0, 3.0], [2.0, 1.0], [1.0, nan], [1.0, nan], [-0.0, 7.0], [0.0, 7.0]])
    with repmode.enabled(strict=True):
        values, inverse, counts = torch.unique(x, dim=0, return_inverse=True, return_counts=True)
    assert_bitwise_equal(values, x[[5, 1, 3, 4, 0]], "rows: sorted, NaN largest, first occurrence's bits")
    assert counts.tolist() == [2, 1, 1, 1, 2]
    assert inverse.tolist() == [4, 1, 4, 2, 3, 0, 0]
    assert_bitwise_equal(values[inverse][[0, 1, 2, 5, 6]], x[[0, 1, 2, 5, 5]], "inverse")


def test_searchsorted_and_bucketize_place_nan_last_and_equal_native_torch_on_floats(rng):
    seq = torch.sort(torch.randn(40, generator=rng))[0]
    values = torch.cat([torch.randn(60, generator=rng), seq[::3], torch.tensor([-0.0, 0.0, float("inf"), -1e30])])
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        s, v = torch.sort(seq.to(dtype))[0], values.to(dtype)
        for right in (False, True):
            got, want = _native_and_repmode(lambda: torch.searchsorted(s, v, right=right))
            assert_bitwise_equal(got, want, f"searchsorted {dtype} right={right}")
            got, want = _native_and_repmode(lambda: torch.bucketize(v, s, right=right))
            assert_bitwise_equal(got, want, f"bucketize {dtype} right={right}")
    with_nan = torch.tensor([-1.0, 0.0, 2.0, nan, nan])  # torch.sort's order: NaN last
    with repmode.enabled(strict=True):
        left = torch.searchsorted(with_nan, torch.tensor([nan, 2.0, -0.0, 5.0]))
        right = torch.searchsorted(with_nan, torch.tensor([nan, 2.0, -0.0, 5.0]), right=True)
    assert left.tolist() == [3, 2, 1, 3] and right.tolist() == [5, 3, 2, 3]


def test_searchsorted_scalar_is_rounded_to_the_sequences_dtype_as_torch_does():
    seq = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float32)
    for value in (0.1, 0.2000000001, 0.3, 1e-50):
        for right in (False, True):
            got, want = _native_and_repmode(lambda: torch.searchsorted(seq, value, right=right))
            assert_bitwise_equal(got, want, f"searchsorted scalar {value}")


def test_cummax_and_cummin_follow_torchs_rule_latest_index_among_ties_and_nans():
    x = torch.tensor([[1.0, 1.0, nan, 2.0, nan, 0.0], [-0.0, 0.0, -1.0, 0.0, -0.0, -1.0]])
    got, want = _native_and_repmode(lambda: torch.cummax(x, 1))
    assert_bitwise_equal(tuple(got), tuple(want), "cummax")
    assert got.indices[0].tolist() == [0, 1, 2, 2, 4, 4] and got.indices[1].tolist() == [0, 1, 1, 3, 4, 4]
    got, want = _native_and_repmode(lambda: torch.cummin(x, 1))
    assert_bitwise_equal(tuple(got), tuple(want), "cummin")


def test_aminmax_propagates_nan_and_raises_torchs_error_on_empty_input():
    x = torch.tensor([[1.0, nan, -3.0], [2.0, -0.0, 0.0]])
    with repmode.enabled(strict=True):
        lo, hi = torch.aminmax(x, dim=1)
        with pytest.raises(RuntimeError):
            torch.aminmax(torch.empty(0))
    assert torch.isnan(lo[0]) and torch.isnan(hi[0])
    assert str(lo[1].item()) == "-0.0" and hi[1].item() == 2.0


def test_selections_are_invariant_across_threads_and_layouts(rng):
    x = torch.randint(-3, 4, (24, 24), generator=rng).float()
    x[5, 3] = -0.0

    def compute(t):
        m = torch.mode(t, 1)
        u = torch.unique(t, return_inverse=True, return_counts=True)
        ud = torch.unique(t, dim=1, return_inverse=True, return_counts=True)
        cm = torch.cummax(t, 0)
        lo, hi = torch.aminmax(t, dim=0)
        return {"mv": m.values, "mi": m.indices, "u": u[0], "ui": u[1], "uc": u[2], "ud": ud[0], "udi": ud[1],
                "cmv": cm.values, "cmi": cm.indices, "lo": lo, "hi": hi,
                "ss": torch.searchsorted(torch.sort(t[0])[0], t), "bk": torch.bucketize(t, torch.tensor([-1., 0., 2.])),
                "lcse": torch.logcumsumexp(t, 1), "isin": torch.isin(t, t[2]), "nz": torch.count_nonzero(t, 0)}

    assert_invariant(compute, x)


def _mp_logcumsumexp(row):
    mpmath.mp.prec = 200
    out, acc = [], None
    for v in row:
        term = mpmath.exp(mpmath.mpf(v))
        acc = term if acc is None else acc + term
        out.append(float(mpmath.log(acc)))
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_logcumsumexp_is_as_accurate_as_native_against_an_mpmath_reference(dtype, rng):
    x = (torch.randn(6, 300, generator=rng, dtype=torch.float64) * 20).to(dtype)
    x[2, 100:] -= 500  # a row whose later terms fall far below the running sum
    x[3, :50] -= 800  # a row whose early terms underflow against later ones in a float64 exp
    got, want = _native_and_repmode(lambda: torch.logcumsumexp(x, 1))
    ref = torch.tensor([_mp_logcumsumexp(r) for r in x.double().tolist()], dtype=torch.float64)
    ours = ((got.double() - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()
    native = ((want.double() - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()
    unit = 2.0 ** -24 if dtype == torch.float32 else 2.0 ** -53
    assert ours <= max(native, unit), (ours, native)
    if dtype == torch.float32:  # one rounding of a float64 scan: the correctly rounded value on these rows
        assert_bitwise_equal(got, ref.to(torch.float32), "float32 logcumsumexp is the rounded float64 scan")


def test_logcumsumexp_special_values_and_low_precision():
    x = torch.tensor([[-float("inf"), -float("inf"), 0.0, float("inf"), 1.0],
                      [1.0, nan, 2.0, 3.0, 4.0]])
    with repmode.enabled(strict=True):
        y = torch.logcumsumexp(x, 1)
        y16 = torch.logcumsumexp(x.to(torch.bfloat16), 1)
    assert y[0].tolist() == [-float("inf"), -float("inf"), 0.0, float("inf"), float("inf")]
    assert y[1, 0].item() == 1.0 and torch.isnan(y[1, 1:]).all()
    assert (y.view(torch.int32)[1, 1:] == 0x7FC00000).all()  # the canonical NaN
    assert (y16.view(torch.int16)[1, 1:] == 0x7FC0).all()
    assert_bitwise_equal(y16[0], torch.logcumsumexp(x[0].to(torch.bfloat16), 0), "bf16 special values")
    more = torch.tensor([[float("inf"), 1.0, nan, 0.0], [-float("inf"), float("inf"), -float("inf"), 1.0]])
    for t in (x, more, more.double()):
        got, want = _native_and_repmode(lambda: torch.logcumsumexp(t, 1))
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def _aminmax_is_differentiable() -> bool:
    try:
        torch.aminmax(torch.ones(2, requires_grad=True)).min.backward()
    except RuntimeError as exc:
        if "not implemented" in str(exc):
            return False
        raise
    return True


@pytest.mark.parametrize("context", ["grad", "no_grad", "inference_mode"])
def test_differentiable_ops_run_under_grad_no_grad_and_inference_mode(context, rng):
    x = torch.randn(5, 8, generator=rng, dtype=torch.float64, requires_grad=context == "grad")
    ctx = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[context]

    # aminmax has a derivative from torch 2.12 on (2.11: "derivative for aten::aminmax is not
    # implemented", natively as under repmode); under grad it joins the sum where torch has one.
    with_aminmax = context != "grad" or _aminmax_is_differentiable()

    def outs(t):
        minmax = [*torch.aminmax(t, dim=1), *torch.aminmax(t)] if with_aminmax else []
        return [torch.cummax(t, 1).values, torch.cummin(t, 0).values, torch.logcumsumexp(t, 1),
                *minmax, torch.mode(t.detach().round() + t - t.detach(), 1).values]

    with repmode.enabled(strict=True), ctx():
        got = outs(x)
        if context == "grad":
            grads = torch.autograd.grad(sum((o * (i + 1)).sum() for i, o in enumerate(got)), x)[0]
    want = outs(x.detach())
    for g, w in zip(got, want):
        torch.testing.assert_close(g.detach(), w, rtol=1e-15, atol=0)
    if context == "grad":
        ref = torch.autograd.grad(sum((o * (i + 1)).sum() for i, o in enumerate(outs(x))), x)[0]
        torch.testing.assert_close(grads, ref, rtol=1e-13, atol=1e-15)


def test_out_forms_write_the_functional_results(rng):
    x = torch.randint(0, 4, (5, 6), generator=rng).float()
    s = torch.sort(x[0])[0]
    with repmode.enabled(strict=True):
        cases = [
            (lambda o: torch.mode(x, 1, out=o), lambda: torch.mode(x, 1), (torch.empty(0), torch.empty(0).long())),
            (lambda o: torch.cummax(x, 1, out=o), lambda: torch.cummax(x, 1), (torch.empty(0), torch.empty(0).long())),
            (lambda o: torch.aminmax(x, dim=0, out=o), lambda: torch.aminmax(x, dim=0),
             (torch.empty(0), torch.empty(0))),
            (lambda o: torch.searchsorted(s, x, out=o), lambda: torch.searchsorted(s, x), torch.empty(0).long()),
            (lambda o: torch.bucketize(x, s, out=o), lambda: torch.bucketize(x, s), torch.empty(0).long()),
            (lambda o: torch.isin(x, s, out=o), lambda: torch.isin(x, s), torch.empty(0, dtype=torch.bool)),
            (lambda o: torch.logcumsumexp(x, 1, out=o), lambda: torch.logcumsumexp(x, 1), torch.empty(0)),
        ]
        for run_out, run, out in cases:
            run_out(out)
            want = run()
            assert_bitwise_equal(tuple(out) if isinstance(out, tuple) else out,
                                 tuple(want) if isinstance(want, tuple) else want, "out=")


def test_invalid_arguments_raise_torchs_errors_and_other_dtypes_are_refused():
    x = torch.randn(3, 4)
    z = torch.randn(3, dtype=torch.complex64)
    with repmode.enabled(strict=True):
        with pytest.raises(IndexError):
            torch.mode(x, 5)
        with pytest.raises(RuntimeError):
            torch.searchsorted(torch.randn(2, 2), torch.randn(3, 3))
        with pytest.raises(RuntimeError):
            torch.logcumsumexp(torch.tensor([1, 2]), 0)
        with pytest.raises(repmode.UnsupportedOpError, match="complex"):
            torch.unique(z)


def test_threads_do_not_change_large_unique_and_mode_results(rng):
    x = torch.randint(0, 50, (64, 500), generator=rng).to(torch.float32)
    with num_threads(1), repmode.enabled(strict=True):
        want = (torch.mode(x, 1), torch.unique(x, dim=0, return_counts=True), torch.logcumsumexp(x, 1))
    with num_threads(2), repmode.enabled(strict=True):
        got = (torch.mode(x, 1), torch.unique(x, dim=0, return_counts=True), torch.logcumsumexp(x, 1))
    assert_bitwise_equal([tuple(want[0]), tuple(want[1]), want[2]], [tuple(got[0]), tuple(got[1]), got[2]], "2 threads")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.uint8], ids=str)
def test_topk_of_long_rows_is_the_first_k_of_the_stable_sort_with_and_without_boundary_ties(dtype, rng):
    """Long rows take the threshold path (k-th key, then the k elements sorted): the same result as the
    stable sort, whether ties at the k-th value exceed k (the lowest indices win) or not."""
    from repmode.kernels.sorting import stable_sort
    distinct = torch.randperm(3000, generator=rng).reshape(6, 500).to(dtype)
    tied = torch.randint(0, 9, (6, 500), generator=rng).to(dtype)
    if dtype.is_floating_point:
        tied[tied == 3] = nan
        tied[tied == 0] = -0.0
    inner_ties = distinct.clone()  # equal values among the k, none at the k-th: the packed-sort path
    inner_ties[:, 7] = inner_ties.max(1).values
    inner_ties[:, 300] = inner_ties.max(1).values
    inner_ties[:, 11] = inner_ties.min(1).values
    inner_ties[:, 400] = inner_ties.min(1).values
    for x in (distinct, tied, tied.t().contiguous().t(), inner_ties):
        for k in (1, 7, 50):
            for largest in (True, False):
                with repmode.enabled(strict=True):
                    got = torch.topk(x, k, 1, largest)
                values, indices = stable_sort(x, 1, largest)
                assert_bitwise_equal(tuple(got), (values[:, :k].contiguous(), indices[:, :k].contiguous()), f"k={k}")
    if dtype == torch.float32:
        got, want = _native_and_repmode(lambda: torch.topk(distinct, 50, 1))
        assert_bitwise_equal(tuple(got), tuple(want), "distinct values: torch's unique result")


def test_bool_inputs_equal_native_where_torch_has_a_bool_kernel_and_raise_its_error_elsewhere():
    x = torch.tensor([[True, False, True, True], [False, False, True, False]])
    for name, fn in (("mode", lambda: torch.mode(x, 1)),
                     ("unique", lambda: torch.unique(x, return_inverse=True, return_counts=True)),
                     ("unique_dim", lambda: torch.unique(x, dim=1, return_counts=True)),
                     ("unique_consecutive", lambda: torch.unique_consecutive(x, return_counts=True)),
                     ("cummax", lambda: torch.cummax(x, 1)), ("aminmax", lambda: torch.aminmax(x, dim=1))):
        got, want = _native_and_repmode(fn)
        assert_bitwise_equal(tuple(got), tuple(want), name)
    with repmode.enabled(strict=True):
        with pytest.raises(RuntimeError, match="Bool"):
            torch.searchsorted(torch.tensor([False, True]), x)
        with pytest.raises(RuntimeError, match="Bool"):
            torch.isin(x, torch.tensor([True]))


def test_empty_and_zero_dim_inputs_equal_native_torch():
    e, e2, s = torch.empty(0), torch.empty(0, 3), torch.tensor(2.5)
    cases = {
        "unique empty": lambda: torch._unique2(e, True, True, True),
        "unique 0-dim": lambda: torch._unique2(s, True, True, True),
        "unique_consecutive empty": lambda: torch.unique_consecutive(e, return_inverse=True, return_counts=True),
        "unique_dim empty": lambda: torch.unique(e2, dim=0, return_inverse=True, return_counts=True),
        "mode 0-dim": lambda: torch.mode(s),
        "mode empty rows": lambda: torch.mode(e2, 1),
        "searchsorted empty sequence": lambda: torch.searchsorted(e, torch.tensor([1.0])),
        "searchsorted empty values": lambda: torch.searchsorted(torch.tensor([1.0, 2.0]), e),
        "bucketize 0-dim": lambda: torch.bucketize(s, torch.tensor([1.0, 3.0])),
        "cummax 0-dim": lambda: torch.cummax(s, 0),
        "cummax empty": lambda: torch.cummax(e2, 0),
        "aminmax 0-dim": lambda: torch.aminmax(s),
        "logcumsumexp 0-dim": lambda: torch.logcumsumexp(s, 0),
        "logcumsumexp empty": lambda: torch.logcumsumexp(e2, 1),
        "logcumsumexp length 1": lambda: torch.logcumsumexp(torch.tensor([[0.5], [-3.25]]), 1),
        "isin empty": lambda: torch.isin(e, torch.tensor([1.0])),
        "topk k=0": lambda: torch.topk(torch.arange(40.0).reshape(2, 20), 0),
        "quantile 0-dim": lambda: torch.quantile(s, 0.5),
        "unique int8 extremes": lambda: torch._unique2(torch.tensor([-3, 5, -3, -128, 127], dtype=torch.int8),
                                                       True, True, True),
    }
    for name, fn in cases.items():
        got, want = _native_and_repmode(fn)
        assert_bitwise_equal(tuple(got) if isinstance(got, tuple) else got,
                             tuple(want) if isinstance(want, tuple) else want, name)
