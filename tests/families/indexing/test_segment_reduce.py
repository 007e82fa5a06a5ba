"""segment_reduce and its backward (docs/semantics.md "Segment reductions"): torch's CPU bits
(sequential folds from `initial` or the identity) for every reduction, with lengths or offsets, on
any axis; ties of max/min share the gradient equally; the same bits at any thread count."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, num_threads

import repmode

REDUCTIONS = ["sum", "mean", "max", "min", "prod"]


def _canon(t):
    """NaNs replaced by one pattern (repmode's NaN is canonical, torch's carries a payload)."""
    return torch.where(torch.isnan(t), torch.full_like(t, float("nan")), t)


def _run(data, reduce, grad_seed=0, **kw):
    x = data.clone().requires_grad_()
    out = torch.segment_reduce(x, reduce, **kw)
    # the incoming gradient: a fixed pattern from a seed (the same inside and outside
    # repmode, whose randn is its own stream)
    go = (torch.arange(out.numel(), dtype=torch.float32).reshape(out.shape) * 0.37 + grad_seed) % 3 - 1.25
    (gx,) = torch.autograd.grad(out, x, go)
    return out.detach(), gx


def _draws():
    g = torch.Generator().manual_seed(11)
    for trial in range(40):
        n = int(torch.randint(1, 9, (1,), generator=g))
        cuts = sorted(torch.randint(0, n + 1, (3,), generator=g).tolist())
        lengths = torch.tensor([cuts[0], cuts[1] - cuts[0], cuts[2] - cuts[1], n - cuts[2]])
        data = torch.randn(n, 3, generator=g)
        if trial % 3 == 0:
            data[torch.randint(0, n, (2,), generator=g)] = 0.0
        if trial % 4 == 0:
            data[torch.randint(0, n, (1,), generator=g)] = -0.0
        if trial % 5 == 0:
            data[torch.randint(0, n, (1,), generator=g)] = float("nan")
        yield trial, data, lengths


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("initial", [None, 2.0, -3.0])
def test_equals_torch_cpu_bits(reduce, initial):
    kw = {} if initial is None else {"initial": initial}
    for trial, data, lengths in _draws():
        if reduce in ("max", "min") and ((data == 0).sum() > 1 or torch.isnan(data).any()):
            continue  # ties: repmode's rule differs from torch's (next test)
        want = _run(data, reduce, trial, lengths=lengths, **kw)
        with repmode.enabled():
            got = _run(data, reduce, trial, lengths=lengths, **kw)
            offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
            by_offsets = _run(data, reduce, trial, offsets=offsets, **kw)
        assert_bitwise_equal([_canon(t) for t in got], [_canon(t) for t in want], f"{reduce} draw {trial}")
        assert_bitwise_equal(by_offsets, got, "offsets = lengths")


def test_axis_one_with_per_row_lengths_and_unsafe_short_lengths():
    g = torch.Generator().manual_seed(3)
    data = torch.randn(2, 7, 3, generator=g)
    lengths = torch.tensor([[2, 0, 5], [3, 3, 1]])
    for reduce in REDUCTIONS:
        want = _run(data, reduce, lengths=lengths, axis=1)
        with repmode.enabled():
            got = _run(data, reduce, lengths=lengths, axis=1)
            short = _run(data, reduce, lengths=torch.tensor([[2, 0, 3], [3, 3, 0]]), axis=1, unsafe=True,
                         initial=1.0)
        assert_bitwise_equal([_canon(t) for t in got], [_canon(t) for t in want], reduce)
        torch.testing.assert_close(short, _run(data, reduce, lengths=torch.tensor([[2, 0, 3], [3, 3, 0]]), axis=1,
                                               unsafe=True, initial=1.0), equal_nan=True)


def test_max_ties_share_the_gradient_equally():
    data = torch.tensor([3.0, 1.0, 3.0, 3.0, -1.0])
    x = data.clone().requires_grad_()
    with repmode.enabled():
        out = torch.segment_reduce(x, "max", lengths=torch.tensor([4, 1]))
        (gx,) = torch.autograd.grad(out, x, torch.tensor([-1.5, 2.0]))
    assert_bitwise_equal(gx, torch.tensor([-0.5, 0.0, -0.5, -0.5, 2.0]))


def test_thread_invariance_and_errors():
    data = torch.randn(4000, 8, generator=torch.Generator().manual_seed(5))
    lengths = torch.tensor([1000, 0, 2500, 500])
    with num_threads(1), repmode.enabled():
        one = [_run(data, r, lengths=lengths) for r in REDUCTIONS]
    with num_threads(2), repmode.enabled():
        two = [_run(data, r, lengths=lengths) for r in REDUCTIONS]
    assert_bitwise_equal(one, two, "1 vs 2 threads")
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="sum to"):
            torch.segment_reduce(data, "sum", lengths=torch.tensor([1, 2]))
        with pytest.raises(RuntimeError, match="unsupported reduction"):
            torch.segment_reduce(data, "median", lengths=lengths)
