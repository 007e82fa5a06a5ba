"""cuDNN's batch norm ops, which F.batch_norm reaches on a GPU, give native_batch_norm's bits under
repmode (forward, running statistics, every gradient; training and eval). Inside
repmode.enabled() the ops are intercepted before any backend kernel, so they are exercised here on
CPU tensors; tests/cuda/test_cuda_mode.py runs them on a GPU."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal

import repmode

aten = torch.ops.aten


def _run(cudnn: bool, training: bool, shape, dtype):
    g = torch.Generator().manual_seed(1)
    C = shape[1]
    x, w, b = (torch.randn(shape, generator=g, dtype=dtype).requires_grad_(),
               torch.randn(C, generator=g, dtype=dtype).requires_grad_(),
               torch.randn(C, generator=g, dtype=dtype).requires_grad_())
    rm, rv = torch.randn(C, generator=g, dtype=dtype), torch.rand(C, generator=g, dtype=dtype) + 0.5
    with repmode.enabled():
        if cudnn:
            y = aten.cudnn_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5)[0]
        else:
            y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.1, eps=1e-5)
        (y * y).sum().backward()
    return {"y": y.detach(), "running_mean": rm, "running_var": rv, "dx": x.grad, "dw": w.grad, "db": b.grad}


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(8, 16, 9, 7), (5, 3), (4, 6, 11)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cudnn_batch_norm_gives_native_batch_norms_bits(training, shape, dtype):
    want, got = _run(False, training, shape, dtype), _run(True, training, shape, dtype)
    for name in want:
        assert_bitwise_equal(got[name], want[name], name)
