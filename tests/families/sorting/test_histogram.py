"""histc, histogram, histogramdd, bincount (repmode/kernels/histogram.py): bins by the formulas of
docs/semantics.md "Histograms and bincount"; counts equal native torch's; weights summed per bin in
float64 in element order and rounded once (checked against math.fsum, next to native torch); the
same bits at 1 and 2 threads."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant
from support.helpers import num_threads

import repmode

FLOATS = (torch.float32, torch.float64)


def _native_and_repmode(fn):
    want = fn()
    with repmode.enabled(strict=True):
        got = fn()
    return got, want


@pytest.mark.parametrize("dtype", FLOATS + (torch.bfloat16, torch.float16), ids=str)
def test_histc_equals_native_torch_in_every_float_dtype(dtype, rng):
    x = torch.randn(12, 20, generator=rng).to(dtype)  # bins below 256: torch's bf16 counts are exact
    x[0, :3] = torch.tensor([-1.0, 1.3, 0.0])  # on the range's edges
    with_nan = x.clone()
    with_nan[1, 0] = float("nan")  # skipped when the range is given (else torch's range error)
    for bins, lo, hi in ((17, 0, 0), (7, -1, 1.3), (1, -2, 2), (100, 0, 0), (5, 3, 3)):
        got, want = _native_and_repmode(lambda: torch.histc(x, bins, min=lo, max=hi))
        assert_bitwise_equal(got, want, f"histc {dtype} bins={bins} [{lo}, {hi}]")
        if lo != hi:
            got, want = _native_and_repmode(lambda: torch.histc(with_nan, bins, min=lo, max=hi))
            assert_bitwise_equal(got, want, f"histc with NaN {dtype} bins={bins} [{lo}, {hi}]")


def test_low_precision_histc_counts_are_exact_counts_rounded_once():
    x = torch.zeros(1000, dtype=torch.bfloat16)
    with repmode.enabled(strict=True):
        got = torch.histc(x, 1, min=-1, max=1)
    assert got.item() == 1000.0
    # torch's own bf16 kernel adds 1.0 in bf16 per thread, each thread stopping at 256
    with num_threads(1):
        assert torch.histc(x, 1, min=-1, max=1).item() == 256.0
    with num_threads(2):
        assert torch.histc(x, 1, min=-1, max=1).item() == 512.0


def test_histc_of_a_constant_input_widens_the_range_by_one_and_checks_it():
    x = torch.full((5,), 2.0)
    got, want = _native_and_repmode(lambda: torch.histc(x, 4))
    assert_bitwise_equal(got, want, "constant input")
    assert got.tolist() == [0.0, 0.0, 5.0, 0.0]
    with repmode.enabled(strict=True):
        with pytest.raises(RuntimeError, match="not finite"):
            torch.histc(torch.tensor([1.0, float("inf")]), 3)
        with pytest.raises(RuntimeError, match="Long"):
            torch.histc(torch.tensor([1, 2]), 3)


def _edges_reference(lo, hi, bins, np_dtype):
    """docs/semantics.md: step = (hi - lo) / bins; lo + step*i for i < (bins+1)//2, else hi - step*(bins-i)."""
    lo, hi = np_dtype(lo), np_dtype(hi)
    step = (hi - lo) / np_dtype(bins)
    half = (bins + 1) // 2
    return [lo + step * np_dtype(i) if i < half else hi - step * np_dtype(bins - i) for i in range(bins + 1)]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_histogram_edges_follow_the_documented_formula_and_counts_equal_native_torch(dtype, rng):
    x = torch.randn(60, 17, generator=rng, dtype=torch.float64).to(dtype)
    np_dtype = np.float32 if dtype == torch.float32 else np.float64
    for bins in (1, 2, 3, 5, 10, 17, 64, 100):
        for rng_ in (None, (-1.1, 2.3)):
            got, want = _native_and_repmode(lambda: torch.histogram(x, bins, range=rng_))
            lo, hi = rng_ if rng_ else (x.min().item(), x.max().item())
            ref = torch.tensor(np.array(_edges_reference(lo, hi, bins, np_dtype)), dtype=dtype)
            assert_bitwise_equal(got.bin_edges, ref, f"edges bins={bins}")
            if bins <= 5:  # torch's linspace takes its scalar path for so few edges: the same formula
                assert_bitwise_equal(got.bin_edges, want.bin_edges, f"edges bins={bins} = native")
            # each element in the bin its edges say (torch's local search does the same)
            want_hist = torch.histogram(x, got.bin_edges).hist
            assert_bitwise_equal(got.hist, want_hist, f"counts bins={bins}")
            if bins <= 5:
                assert_bitwise_equal(got.hist, want.hist, f"counts bins={bins} = native")


def test_histogram_with_tensor_bins_counts_by_the_edges_as_torch_does(rng):
    x = torch.randn(500, generator=rng)
    edges = torch.tensor([-2.0, -0.5, 0.0, 0.1, 3.0])
    x[:5] = edges  # on the edges: the bin to the right; the last edge: the last bin
    got, want = _native_and_repmode(lambda: torch.histogram(x, edges))
    assert_bitwise_equal(tuple(got), tuple(want), "tensor bins")


def _fsum_hist(x, edges, w):
    """Per bin, math.fsum of the weights of its elements (bins by searchsorted on the edges)."""
    b = (torch.searchsorted(edges, x, right=True) - 1).clamp(0, edges.numel() - 2)
    inside = (x >= edges[0]) & (x <= edges[-1])
    return [math.fsum(w[inside & (b == i)].double().tolist()) for i in range(edges.numel() - 1)]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_weighted_histogram_rounds_the_float64_sum_once_and_beats_native_accuracy(dtype, rng):
    x = torch.randn(20000, generator=rng, dtype=dtype)
    w = (torch.rand(20000, generator=rng, dtype=torch.float64) * 1000).to(dtype)
    with num_threads(1):  # torch's CPU kernel at 1 thread: one sequential pass in the input dtype
        got, want = _native_and_repmode(lambda: torch.histogram(x, 23, weight=w))
    exact = torch.tensor(_fsum_hist(x, got.bin_edges, w), dtype=torch.float64)
    ours = (got.hist.double() - exact).abs().max().item()
    native = (want.hist.double() - exact).abs().max().item()
    assert ours <= native, (ours, native)
    if dtype == torch.float32:  # the float64 sum of 20,000 float32 terms is exact to far below an ulp
        assert_bitwise_equal(got.hist, exact.to(torch.float32), "correctly rounded bins")
        assert ours < native / 10, (ours, native)
    else:  # float64 weights: the sequential float64 sum is torch's own 1-thread order, bit for bit
        edges_equal = torch.equal(got.bin_edges, want.bin_edges)
        assert not edges_equal or torch.equal(got.hist, want.hist)
        with num_threads(1):
            native_same_edges = torch.histogram(x, got.bin_edges, weight=w).hist
        assert_bitwise_equal(got.hist, native_same_edges, "native order, 1 thread")


def test_histogram_density_is_torchs_formula_over_repmodes_sums(rng):
    x = torch.randn(300, generator=rng)
    w = torch.rand(300, generator=rng)
    with repmode.enabled(strict=True):
        hist, edges = torch.histogram(x, 9, weight=w, density=True)
        raw = torch.histogram(x, 9, weight=w).hist
        expect = raw / raw.sum() / (edges[1:] - edges[:-1])
    assert_bitwise_equal(hist, expect, "density")
    torch.testing.assert_close(hist, torch.histogram(x, 9, weight=w, density=True).hist, rtol=1e-5, atol=0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_histogramdd_counts_equal_native_and_bins_tensors_and_weights_work(dtype, rng):
    y = torch.randn(400, 3, generator=rng, dtype=dtype)
    got, want = _native_and_repmode(lambda: torch.histogramdd(y, bins=[2, 3, 5]))
    assert_bitwise_equal(got.hist, want.hist, "counts")
    assert all(torch.equal(g, w) for g, w in zip(got.bin_edges, want.bin_edges))
    edges = [torch.tensor([-1.0, 0.0, 0.5, 1.0], dtype=dtype), torch.tensor([-3.0, 3.0], dtype=dtype),
             torch.tensor([-1.0, 1.0], dtype=dtype)]
    got, want = _native_and_repmode(lambda: torch.histogramdd(y, bins=edges))
    assert_bitwise_equal(got.hist, want.hist, "tensor bins")
    got, want = _native_and_repmode(lambda: torch.histogramdd(y, bins=[2, 3, 4], range=[-1., 1., -2., 2., 0., 1.]))
    assert_bitwise_equal(got.hist, want.hist, "range")
    w = torch.rand(400, generator=rng, dtype=dtype)
    got, want = _native_and_repmode(lambda: torch.histogramdd(y, bins=[2, 3, 4], weight=w, density=True))
    torch.testing.assert_close(got.hist, want.hist, rtol=1e-5 if dtype == torch.float32 else 1e-12, atol=0)


@pytest.mark.parametrize("weight_dtype", [None, torch.float32, torch.float64, torch.int64, torch.bfloat16], ids=str)
def test_bincount_dtypes_and_counts_equal_native_and_weights_are_float64_sums_rounded_once(weight_dtype, rng):
    i = torch.randint(0, 20, (5000,), generator=rng)
    w = None if weight_dtype is None else (torch.rand(5000, generator=rng, dtype=torch.float64) * 10).to(weight_dtype)
    got, want = _native_and_repmode(lambda: torch.bincount(i, w, minlength=25))
    assert got.dtype == want.dtype and got.shape == want.shape
    if w is None:
        assert_bitwise_equal(got, want, "counts")
        return
    if weight_dtype == torch.float64:  # the float64 sum in index order: torch's own order
        assert_bitwise_equal(got, want, "float64 weights")
        return
    # float32, bf16 and integer weights: their float64 sum of 5,000 terms is exact here, rounded once
    exact = torch.tensor([math.fsum(w[i == b].double().tolist()) for b in range(25)], dtype=torch.float64)
    assert_bitwise_equal(got, exact.to(got.dtype), "each bin: its float64 sum rounded once")
    assert (got.double() - exact).abs().max() <= (want.double() - exact).abs().max()


def test_weighted_counts_are_the_same_at_1_and_2_threads_and_for_every_layout(rng):
    x = torch.randn(64, 300, generator=rng)
    w = torch.rand(64, 300, generator=rng) * 100
    i = torch.randint(0, 50, (64, 300), generator=rng)

    def compute(t, wt, it):
        h = torch.histogram(t, 37, weight=wt)
        return {"hist": h.hist, "edges": h.bin_edges, "histc": torch.histc(t, 11),
                "bincount": torch.bincount(it.reshape(-1), wt.reshape(-1)),
                "dd": torch.histogramdd(t[:, :2].contiguous(), bins=[4, 5], weight=wt[:, 0].contiguous()).hist}

    assert_invariant(compute, x, w, i)
    big = torch.rand(2_000_000, generator=rng)
    with num_threads(1), repmode.enabled(strict=True):
        one = torch.histogram(big, 10, weight=big)
    with num_threads(2), repmode.enabled(strict=True):
        two = torch.histogram(big, 10, weight=big)
    assert_bitwise_equal(tuple(one), tuple(two), "2,000,000 weights at 1 and 2 threads")


@pytest.mark.parametrize("context", ["grad", "no_grad", "inference_mode"])
def test_histogram_ops_run_under_grad_no_grad_and_inference_mode(context, rng):
    x = torch.randn(50, generator=rng)
    ctx = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[context]
    with repmode.enabled(strict=True), ctx():
        out = (torch.histc(x, 5), torch.histogram(x, 4).hist, torch.bincount(torch.tensor([1, 1, 3]), x[:3]))
    assert_bitwise_equal(out[0], torch.histc(x, 5), "histc")
    assert_bitwise_equal(out[1], torch.histogram(x, 4).hist, "histogram counts")
    assert out[2].tolist() == [0.0, (x[0] + x[1]).item(), 0.0, x[2].item()]


def test_out_forms_and_errors():
    x = torch.tensor([0.5, 1.5, 2.5, 2.5])
    with repmode.enabled(strict=True):
        out = torch.empty(0)
        torch.histc(x, 3, out=out)
        hist, edges = torch.empty(0), torch.empty(0)
        torch.histogram(x, 3, out=(hist, edges))
        with pytest.raises(RuntimeError):
            torch.bincount(torch.tensor([-1, 2]))
        with pytest.raises(RuntimeError):
            torch.histogram(torch.tensor([1, 2]), 3)
    assert out.tolist() == [1.0, 1.0, 2.0] and hist.tolist() == [1.0, 1.0, 2.0]
    assert edges.tolist() == [float(e) for e in _edges_reference(0.5, 2.5, 3, np.float32)]


def test_empty_inputs_equal_native_torch():
    e = torch.empty(0)
    cases = {
        "histc": lambda: torch.histc(e, 4),
        "histogram": lambda: tuple(torch.histogram(e, 4)),
        "histogram weighted": lambda: tuple(torch.histogram(e, 3, weight=torch.empty(0))),
        "bincount": lambda: torch.bincount(torch.empty(0, dtype=torch.long), torch.empty(0)),
        "bincount minlength": lambda: torch.bincount(torch.empty(0, dtype=torch.long), torch.empty(0), minlength=3),
        "histogramdd one sample": lambda: torch.histogramdd(torch.tensor([[0.5, 0.5]]), bins=[2, 2]).hist,
    }
    for name, fn in cases.items():
        got, want = _native_and_repmode(fn)
        assert_bitwise_equal(got, want, name)


@pytest.mark.parametrize("n,size", [(1000, 7), (5000, 300), (100, 100000)])
def test_bin_sums_equal_the_plain_sequential_float64_loop(n, size, rng):
    """The reference: bin b starts at +0.0 and adds its weights one after the other in position order
    (both layouts: the padded table summed by cumsum, and index_add for one crowded bin among many)."""
    from repmode.kernels import load
    from repmode.kernels.histogram import ordered_bin_sums
    load()
    index = torch.randint(0, size, (n,), generator=rng)
    w = torch.randn(n, generator=rng, dtype=torch.float64) * torch.logspace(-5, 5, n, dtype=torch.float64)
    w[::7] = -0.0
    want = [0.0] * size
    for i, b in enumerate(index.tolist()):
        want[b] = want[b] + w[i].item()  # Python floats: IEEE float64, one rounding per addition
    assert_bitwise_equal(ordered_bin_sums(index, w, size), torch.tensor(want, dtype=torch.float64), "bin sums")
