"""CUDA == CPU, bit for bit: the CTC loss forward and backward (csrc/cuda/ctc.cu, one GPU thread per
batch element, against csrc/cpu/ctc.cpp): padded and concatenated targets, empty targets, zero input
lengths, an impossible alignment with and without zero_infinity, strided log-probabilities, float32
and float64; then the whole op on CUDA tensors through the mode."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal
from support.cuda_helpers import CPU, GPU, finish, needs_cuda, needs_cuda_tensors, on_gpu, stream

import repmode

pytestmark = needs_cuda

CODE = {torch.float32: 0, torch.float64: 1}


def _case(dtype, concatenated, strided):
    g = torch.Generator().manual_seed(11)
    T, B, C = 19, 6, 5
    lp = torch.randn(T, B, C, generator=g, dtype=torch.float64).log_softmax(2).to(dtype)
    if strided:
        lp = lp.transpose(0, 1).contiguous().transpose(0, 1)
    il = torch.tensor([19, 0, 7, 3, 19, 12])
    tl = torch.tensor([4, 2, 0, 3, 9, 6])
    tg = torch.randint(1, C, (B, 9), generator=g)
    tg[3, :3] = 2                                     # 3 equal labels in 3 steps: impossible (inf)
    if concatenated:
        tg = torch.cat([tg[b, :int(tl[b])] for b in range(B)])
        offsets = torch.cumsum(tl, 0) - tl
        stride = 1
    else:
        offsets = torch.arange(B) * tg.stride(0)
        stride = tg.stride(1)
    return lp, tg, offsets, stride, il, tl, 2 * int(tl.max()) + 1


def _run(lib, last, lp, tg, offsets, il, tl, stride, S, gout, zero_infinity):
    T, B, C = lp.shape
    common = (CODE[lp.dtype], T, B, C, lp.data_ptr(), *lp.stride(), tg.data_ptr(), offsets.data_ptr(), stride,
              il.data_ptr(), tl.data_ptr(), 0)
    nll = torch.empty(B, dtype=lp.dtype, device=lp.device)
    alpha = torch.empty(B, T, S, dtype=lp.dtype, device=lp.device)
    lib.ctc_loss_forward(*common, S, nll.data_ptr(), alpha.data_ptr(), last)
    grad = torch.empty(T, B, C, dtype=lp.dtype, device=lp.device)
    lib.ctc_loss_backward(*common, gout.data_ptr(), S, gout.stride(0), zero_infinity, grad.data_ptr(), last)
    return nll, alpha, grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("concatenated", [False, True])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_forward_and_backward(dtype, concatenated, strided, zero_infinity):
    lp, tg, offsets, stride, il, tl, S = _case(dtype, concatenated, strided)
    gout = torch.linspace(0.5, 2.0, lp.shape[1], dtype=dtype)
    cpu = _run(CPU, 2, lp, tg, offsets, il, tl, stride, S, gout, zero_infinity)
    gpu = _run(GPU, stream(), on_gpu(lp), on_gpu(tg), on_gpu(offsets), on_gpu(il), on_gpu(tl), stride, S,
               on_gpu(gout), zero_infinity)
    finish()
    for name, a, b in zip(("nll", "log_alpha", "grad"), cpu, gpu):
        assert_bitwise_equal(b.cpu(), a, name)


@needs_cuda_tensors
def test_ctc_loss_on_cuda_tensors_gives_the_cpu_bits():
    lp, tg, _, _, il, tl, _ = _case(torch.float32, False, False)
    out = {}
    for device in ("cpu", "cuda"):
        x = lp.detach().to(device).requires_grad_()  # a leaf on each device
        with repmode.enabled():
            loss = F.ctc_loss(x, tg.to(device), il, tl, reduction="sum", zero_infinity=True)
            loss.backward()
        out[device] = (loss.detach().cpu(), x.grad.cpu())
    assert_bitwise_equal(out["cuda"][0], out["cpu"][0], "loss")
    assert_bitwise_equal(out["cuda"][1], out["cpu"][1], "gradient")
