"""Whole ops under ``repmode.enabled()`` on CUDA tensors: the families' wiring (kernels_for,
launch_arg, device-side allocation) and the kernels together give the CPU's bits."""
from __future__ import annotations

import pytest
import torch
from support.cuda_helpers import needs_cuda_tensors

import repmode
from repmode.tools import crosscheck

pytestmark = needs_cuda_tensors


@pytest.mark.parametrize("name", list(crosscheck.BATTERY))
def test_battery_entry_has_the_cpu_digest_on_cuda(name):
    fn = crosscheck.BATTERY[name]
    assert crosscheck._run_op(fn, "cuda", None) == crosscheck._run_op(fn, "cpu", 2)


def test_results_stay_on_the_inputs_device():
    x = torch.randn(33, 17, device="cuda")
    with repmode.enabled():
        outs = [x @ x.t(), x.sum(0), torch.softmax(x, 1), torch.exp(x), torch.rand(5, device="cuda")]
    assert all(o.device == x.device for o in outs)


def test_cpu_and_cuda_operands_raise_torchs_error():
    with repmode.enabled(), pytest.raises(RuntimeError, match="same device"):
        torch.randn(3, 3, device="cuda") @ torch.randn(3, 3)


def test_a_0_dim_cpu_tensor_joins_a_cuda_elementwise_op_like_in_torch():
    x = torch.randn(8, device="cuda")
    s = torch.tensor(2.5)
    with repmode.enabled():
        got = x * s
    assert torch.equal(got.cpu(), x.cpu() * 2.5)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_autocast_training_steps_have_the_cpu_bits_on_cuda(dtype):
    """Mixed precision in strict mode on the GPU (torch.autocast + GradScaler): the linear layers
    run widened in `dtype` on both devices (in both devices' autocast lists), the loss in float32;
    two SGD steps give the CPU's parameters bit for bit."""
    def train(device):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(device)
        x, y = torch.randn(16, 32).to(device), torch.randint(0, 10, (16,)).to(device)
        with repmode.enabled():
            for _ in range(2):
                opt.zero_grad()
                with torch.autocast(device, dtype=dtype):
                    logits = model(x)
                assert logits.dtype == dtype
                scaler.scale(torch.nn.functional.cross_entropy(logits.float(), y)).backward()
                scaler.step(opt)
                scaler.update()
        return [p.detach().cpu() for p in model.parameters()]

    for got, want in zip(train("cuda"), train("cpu")):
        assert torch.equal(got.view(torch.int32), want.view(torch.int32))


def test_kernels_launch_on_the_current_stream():
    from repmode.kernels._common import launch_arg
    x = torch.randn(4, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        assert launch_arg(x) == side.cuda_stream
    assert launch_arg(x) == torch.cuda.current_stream().cuda_stream


def test_contiguous_elementwise_hot_path_has_the_cpu_bits_on_cuda():
    """The optimizers' forms (a tensor with a number, with a tensor of its shape, three operands,
    in place) take the flat entry points on both devices."""
    gen = torch.Generator().manual_seed(3)
    a, b, c = (torch.randn(1000, generator=gen) for _ in range(3))

    def ops(a, b, c):
        a2 = a.clone()
        a2.mul_(0.9).add_(b, alpha=0.1).addcmul_(b, c, value=0.01).lerp_(c, 0.3)
        return [a + b, a * 2.5, torch.exp(a), torch.addcdiv(a, b, c.abs() + 1.0, value=-0.5), a2]

    with repmode.enabled():
        want = ops(a, b, c)
        got = ops(a.cuda(), b.cuda(), c.cuda())
    for g, w in zip(got, want):
        assert torch.equal(g.cpu().view(torch.int32), w.view(torch.int32))
