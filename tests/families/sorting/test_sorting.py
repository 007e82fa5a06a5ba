"""Sorting and selection: values exact, ties by lower index (stable) ascending and descending, NaN
largest, -0.0 == +0.0; checked against native torch where its result is unique and against a plain
Python stable sort on ties; invariant across threads and layouts."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant
from support.helpers import num_threads

import repmode

nan = float("nan")


def _key(v):
    """Sort key of one float: NaN largest, -0.0 == +0.0."""
    return (1, 0.0) if v != v else (0, v + 0.0)


def _reference_sort(row, descending):
    """Python's sorted() is stable; descending keeps ties in index order too."""
    order = sorted(range(len(row)), key=lambda i: _key(row[i]), reverse=False)
    if descending:  # stable descending: sort by negated key, ties keep index order
        order = sorted(range(len(row)), key=lambda i: (-_key(row[i])[0], -_key(row[i])[1]))
    return order


def _tied_input():
    return torch.tensor([[2.0, nan, -0.0, 1.0, 0.0, 2.0, nan, 1.0, -0.0, 0.0],
                         [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                         [nan, nan, nan, nan, nan, nan, nan, nan, nan, nan],
                         [0.0, -0.0, 3.0, nan, -1.0, 3.0, -1.0, 0.0, nan, -0.0]])


def test_sort_equals_native_torch_on_distinct_values_in_every_dtype(rng):
    base = torch.randperm(40, generator=rng).reshape(5, 8) - 20
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int8):
        x = base.to(dtype)
        for descending in (False, True):
            want = torch.sort(x, dim=1, descending=descending)
            with repmode.enabled(strict=True):
                got = torch.sort(x, dim=1, descending=descending)
                got_arg = torch.argsort(x, dim=0, descending=descending)
                got_m = torch.msort(x)
            assert_bitwise_equal(tuple(got), tuple(want), f"sort {dtype} {descending}")
            assert_bitwise_equal(got_arg, torch.argsort(x, dim=0, descending=descending), "argsort")
            assert_bitwise_equal(got_m, torch.msort(x), "msort")


def test_sort_breaks_ties_by_lower_index_with_nan_largest_and_signed_zeros_equal():
    x = _tied_input()
    for descending in (False, True):
        with repmode.enabled(strict=True):
            values, indices = torch.sort(x, dim=1, descending=descending)
            unstable = torch.sort(x, dim=1, descending=descending, stable=False)
        for r, row in enumerate(x.tolist()):
            want = _reference_sort(row, descending)
            assert indices[r].tolist() == want, (r, descending)
            assert_bitwise_equal(values[r], x[r][want], f"row {r}")
        assert_bitwise_equal(tuple(unstable), (values, indices), "stable=False gives the stable result")


def test_sort_keeps_every_bit_of_nan_payloads_and_zero_signs():
    x = torch.tensor([1.0, -0.0, 0.0, 2.0], dtype=torch.bfloat16)
    x.view(torch.int16)[3] = 0x7FC1  # a NaN with a payload
    with repmode.enabled(strict=True):
        values, indices = torch.sort(x)
    assert indices.tolist() == [1, 2, 0, 3]
    assert values.view(torch.int16).tolist() == x[indices].view(torch.int16).tolist()


def test_bool_sort_is_stable():
    x = torch.tensor([True, False, True, False, False])
    with repmode.enabled(strict=True):
        values, indices = torch.sort(x, descending=True)
    assert indices.tolist() == [0, 2, 1, 3, 4] and values.tolist() == [True, True, False, False, False]


def test_topk_is_the_first_k_of_the_stable_sort_for_largest_and_smallest():
    x = _tied_input()
    for largest in (True, False):
        for sorted_ in (True, False):
            with repmode.enabled(strict=True):
                values, indices = torch.topk(x, 4, dim=1, largest=largest, sorted=sorted_)
            for r, row in enumerate(x.tolist()):
                assert indices[r].tolist() == _reference_sort(row, largest)[:4]
            assert_bitwise_equal(values, x.gather(1, indices), "values")


def test_topk_kthvalue_and_median_equal_native_torch_on_distinct_values(rng):
    x = torch.randn(6, 9, generator=rng)
    with repmode.enabled(strict=True):
        got = {"topk": torch.topk(x, 3, dim=1), "small": torch.topk(x, 2, dim=0, largest=False),
               "kth": torch.kthvalue(x, 4, dim=1, keepdim=True), "med": torch.median(x, 0),
               "med_all": torch.median(x), "nanmed": torch.nanmedian(x, 1), "nanmed_all": torch.nanmedian(x)}
    want = {"topk": torch.topk(x, 3, dim=1), "small": torch.topk(x, 2, dim=0, largest=False),
            "kth": torch.kthvalue(x, 4, dim=1, keepdim=True), "med": torch.median(x, 0),
            "med_all": torch.median(x), "nanmed": torch.nanmedian(x, 1), "nanmed_all": torch.nanmedian(x)}
    for k in want:
        w, g = want[k], got[k]
        assert_bitwise_equal(tuple(g) if isinstance(w, tuple) else g, tuple(w) if isinstance(w, tuple) else w, k)


def test_kthvalue_and_median_pick_their_position_of_the_stable_ascending_sort():
    x = _tied_input()
    with repmode.enabled(strict=True):
        kth = torch.kthvalue(x, 3, dim=1)
        med = torch.median(x, 1)
    for r, row in enumerate(x.tolist()):
        order = _reference_sort(row, False)
        assert int(kth.indices[r]) == order[2]
        m = sum(v == v for v in row)
        want = order[m] if m < len(row) else order[(len(row) - 1) // 2]  # first NaN, else lower median
        assert int(med.indices[r]) == want, r
    assert_bitwise_equal(kth.values, x.gather(1, kth.indices[:, None])[:, 0], "kth values")


def test_median_with_nan_and_nanmedian_match_torch_value_and_index():
    x = torch.tensor([[3.0, nan, 1.0, nan, 2.0], [5.0, 4.0, 3.0, 2.0, 1.0], [nan, nan, nan, nan, nan],
                      [2.0, nan, 7.0, nan, 0.0]])
    with repmode.enabled(strict=True):
        got = (torch.median(x, 1), torch.nanmedian(x, 1), torch.median(x), torch.nanmedian(x))
    want = (torch.median(x, 1), torch.nanmedian(x, 1), torch.median(x), torch.nanmedian(x))
    for g, w in zip(got[:2], want[:2]):
        assert_bitwise_equal(tuple(g), tuple(w), "median rows")
    assert_bitwise_equal(got[2], want[2], "median()")
    assert_bitwise_equal(got[3], want[3], "nanmedian()")


def test_integer_selection_equals_native_torch_on_distinct_values(rng):
    x = (torch.randperm(30, generator=rng).reshape(5, 6) - 15).to(torch.int32)
    with repmode.enabled(strict=True):
        got = (torch.topk(x, 2, 1), torch.kthvalue(x, 2, 0), torch.median(x, 1), torch.nanmedian(x, 0))
    want = (torch.topk(x, 2, 1), torch.kthvalue(x, 2, 0), torch.median(x, 1), torch.nanmedian(x, 0))
    for g, w in zip(got, want):
        assert_bitwise_equal(tuple(g), tuple(w), "int")


def test_selection_is_invariant_across_threads_and_layouts(rng):
    x = torch.randint(-3, 4, (24, 24), generator=rng).float()  # many ties
    x[7, 0] = -0.0

    def compute(t):
        s = torch.sort(t, dim=1, descending=True)
        k = torch.topk(t, 5, dim=0)
        m = torch.median(t, 1)
        n = torch.nanmedian(t, 0)
        q = torch.kthvalue(t, 7, 1)
        return {"sv": s.values, "si": s.indices, "kv": k.values, "ki": k.indices, "mv": m.values, "mi": m.indices,
                "nv": n.values, "ni": n.indices, "qv": q.values, "qi": q.indices}

    assert_invariant(compute, x)
    with_nan = x.clone()
    with_nan[3, 5] = with_nan[3, 9] = with_nan[11, 5] = nan  # assert_invariant's layouts compare with torch.equal
    with num_threads(1), repmode.enabled(strict=True):
        want = compute(with_nan)
    for threads in (1, 2):
        for layout in (with_nan, with_nan.t().contiguous().t()):
            with num_threads(threads), repmode.enabled(strict=True):
                got = compute(layout)
            for k in want:
                assert_bitwise_equal(got[k], want[k], f"{k} at {threads} threads")


def test_out_forms_write_the_functional_results():
    x = _tied_input()
    with repmode.enabled(strict=True):
        want = (torch.sort(x, 1), torch.topk(x, 3), torch.kthvalue(x, 2), torch.median(x, 1), torch.nanmedian(x, 1))
        outs = [(torch.empty(0), torch.empty(0, dtype=torch.long)) for _ in range(6)]
        torch.sort(x, 1, out=outs[0])
        torch.topk(x, 3, out=outs[1])
        torch.kthvalue(x, 2, out=outs[2])
        torch.median(x, 1, out=outs[3])
        torch.nanmedian(x, 1, out=outs[4])
        torch.sort(x, stable=True, dim=1, out=outs[5])
        a, m, med, nmed = torch.empty(0, dtype=torch.long), torch.empty(0), torch.empty(0), torch.empty(0)
        torch.argsort(x, stable=True, out=a)
        torch.msort(x, out=m)
        torch.ops.aten.median.out(x, out=med)  # no Python binding for the out= form
        torch.ops.aten.nanmedian.out(x, out=nmed)
        want_rest = (torch.argsort(x, stable=True), torch.msort(x), torch.median(x), torch.nanmedian(x))
    for w, o in zip(want + (want[0],), outs):
        assert_bitwise_equal(tuple(o), tuple(w), "out=")
    for w, o in zip(want_rest, (a, m, med, nmed)):
        assert_bitwise_equal(o, w, "out=")


@pytest.mark.parametrize("context", ["grad", "no_grad", "inference_mode"])
def test_sorting_ops_run_under_grad_no_grad_and_inference_mode(context, rng):
    x = torch.randn(4, 6, generator=rng, requires_grad=context == "grad")
    ctx = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[context]
    with repmode.enabled(strict=True), ctx():
        outs = [torch.sort(x, 1).values, torch.topk(x, 2).values, torch.kthvalue(x, 3).values,
                torch.median(x, 0).values, torch.nanmedian(x, 1).values, torch.median(x), torch.msort(x)]
        if context == "grad":
            grads = torch.autograd.grad(sum(o.sum() for o in outs), x)[0]
    if context == "grad":
        want = torch.autograd.grad(sum(o.sum() for o in [
            torch.sort(x, 1).values, torch.topk(x, 2).values, torch.kthvalue(x, 3).values, torch.median(x, 0).values,
            torch.nanmedian(x, 1).values, torch.median(x), torch.msort(x)]), x)[0]
        assert_bitwise_equal(grads, want, "grad")


def test_invalid_arguments_raise_torchs_own_errors():
    x = torch.randn(3, 4)
    with repmode.enabled(strict=True):
        with pytest.raises(RuntimeError, match="k"):
            torch.topk(x, 9)
        with pytest.raises(RuntimeError, match="out of range"):
            torch.kthvalue(x, 5)
        with pytest.raises(IndexError, match="Dimension out of range"):
            torch.sort(x, dim=3)
        with pytest.raises(repmode.UnsupportedOpError):
            torch.topk(torch.tensor([True, False]), 1)
