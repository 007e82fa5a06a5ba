"""nn.LSTM under ``repmode.enabled()`` on CUDA (cuDNN's _cudnn_rnn / _cudnn_rnn_backward, computed in
the CPU path's order) gives the CPU's bits: outputs, hy, cy and every gradient."""
from __future__ import annotations

import copy

import pytest
import torch
from support.cuda_helpers import needs_cuda_tensors
from torch import nn

import repmode

pytestmark = needs_cuda_tensors


def _steps(m, x, h0, c0, device, steps=2):
    """``steps`` forward + backward passes (train mode, seeded once); the digest of each step's results."""
    m = copy.deepcopy(m)
    with repmode.enabled():
        m = m.to(device)                            # on CUDA: flatten_parameters -> _cudnn_rnn_flatten_weight
        torch.manual_seed(5)                        # dropout masks (and, on CUDA, cuDNN's dropout-state seed)
        digests = []
        for _ in range(steps):
            m.zero_grad()
            xx, hh, cc = (t.to(device).detach().requires_grad_() for t in (x, h0, c0))
            y, (hy, cy) = m(xx, (hh, cc))
            ((y * y).sum() + (hy * 0.5).sum() + (cy * cy).sum()).backward()
            results = {"y": y, "hy": hy, "cy": cy, "x grad": xx.grad, "h0 grad": hh.grad, "c0 grad": cc.grad}
            results.update({n + " grad": p.grad for n, p in m.named_parameters()})
            digests.append({k: repmode.digest(v.detach()) for k, v in results.items()})
    return digests


@pytest.mark.parametrize("kw", [
    dict(num_layers=2, bidirectional=True, dropout=0.2),
    dict(num_layers=2, bidirectional=True, dropout=0.2, batch_first=True),
    dict(num_layers=3, bias=False),
])
def test_lstm_forward_and_backward_on_cuda_give_the_cpu_digests(kw):
    torch.manual_seed(0)
    m = nn.LSTM(7, 6, **kw)
    g = torch.Generator().manual_seed(1)
    n = m.num_layers * (2 if m.bidirectional else 1)
    x = torch.randn((3, 5, 7) if m.batch_first else (5, 3, 7), generator=g)
    h0, c0 = torch.randn(n, 3, 6, generator=g), torch.randn(n, 3, 6, generator=g)
    cpu = _steps(m, x, h0, c0, "cpu")
    gpu = _steps(m, x, h0, c0, "cuda")
    for step, (a, b) in enumerate(zip(cpu, gpu)):
        differ = [k for k in a if a[k] != b[k]]
        assert not differ, f"step {step}: {differ} differ between CPU and CUDA"


def test_gru_on_cuda_is_refused_by_name():
    m = nn.GRU(4, 5).cuda()
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="fused GRU is not implemented"):
        m(torch.randn(3, 2, 4, device="cuda"))
