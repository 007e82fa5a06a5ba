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
