"""linear_cross_entropy's chunked custom ops (torch >= 2.13, `options=` given): the loss and
gradients equal the unchunked cross_entropy(linear(...)) through repmode, bit for bit, whatever
the batch chunk size (docs/semantics.md "Linear cross entropy")."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, num_threads

import repmode

nn_options = pytest.importorskip("torch.nn").__dict__.get("LinearCrossEntropyOptions")
pytestmark = pytest.mark.skipif(nn_options is None, reason="torch < 2.13 has no linear_cross_entropy options")


def _inputs():
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(37, 16, generator=g), torch.randn(50, 16, generator=g), torch.randn(50, generator=g)
    t = torch.randint(0, 50, (37,), generator=g)
    t[3] = -100
    return x, w, b, t


def _grads(fn, x, w, b, reduce_sum):
    leaves = [v.clone().requires_grad_() for v in (x, w, b)]
    loss = fn(*leaves)
    return [loss.detach()] + list(torch.autograd.grad(loss.sum() if reduce_sum else loss, leaves))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("chunk", [8, 16, 64])
def test_chunked_equals_unchunked_bits(reduction, chunk):
    x, w, b, t = _inputs()
    weight = torch.rand(50, generator=torch.Generator().manual_seed(1)) + 0.5
    opts = nn_options(batch_chunk_size=chunk)
    with repmode.enabled():
        got = _grads(lambda x, w, b: F.linear_cross_entropy(x, w, t, linear_bias=b, weight=weight,
                                                            reduction=reduction, options=opts), x, w, b, False)
        want = _grads(lambda x, w, b: F.cross_entropy(F.linear(x, w, b), t, weight=weight, reduction=reduction),
                      x, w, b, False)
    assert_bitwise_equal(got, want, f"{reduction} chunk {chunk}")
    native64 = _grads(lambda x, w, b: F.cross_entropy(F.linear(x, w, b), t, weight=weight.double(),
                                                      reduction=reduction), x.double(), w.double(), b.double(), False)
    native = _grads(lambda x, w, b: F.linear_cross_entropy(x, w, t, linear_bias=b, weight=weight,
                                                           reduction=reduction, options=opts), x, w, b, False)
    for r, n, ref in zip(got, native, native64):
        assert (r.double() - ref).abs().max() <= 2 * max((n.double() - ref).abs().max().item(), 1e-7)


def test_no_reduction_loss_is_unchunked_and_backward_thread_invariant():
    x, w, b, t = _inputs()
    opts = nn_options(batch_chunk_size=8)

    def run(threads):
        with num_threads(threads), repmode.enabled():
            return _grads(lambda x, w, b: F.linear_cross_entropy(x, w, t, linear_bias=b, reduction="none",
                                                                 options=opts), x, w, b, True)
    one, two = run(1), run(2)
    assert_bitwise_equal(one, two, "1 vs 2 threads")
    with repmode.enabled():
        unchunked = F.cross_entropy(F.linear(x, w, b), t, reduction="none")
    assert_bitwise_equal(one[0], unchunked, "per-sample losses")
