"""_foreach_* ops: the single-tensor op applied tensor by tensor, so foreach optimizers and
gradient clipping give the bits of their for-loop forms; invariant to threads and layout."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant

import repmode


def _train(opt_name: str, foreach: bool, clip: str | None = None, fused: bool = False):
    repmode.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    kwargs = {"fused": True} if fused else {"foreach": foreach}
    opt = {
        "sgd": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3, **kwargs),
        "adam": lambda p: torch.optim.Adam(p, lr=1e-2, **kwargs),
        "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.05, amsgrad=True, **kwargs),
        "adam_wd_max": lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=0.01, maximize=True, **kwargs),
        "sgd_plain": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.2, **kwargs),
        "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-2, momentum=0.5, centered=True, **kwargs),
        "adagrad": lambda p: torch.optim.Adagrad(p, lr=1e-2, **kwargs),
    }[opt_name](model.parameters())
    x = torch.randn(32, 12)
    y = torch.randint(0, 4, (32,))
    for _ in range(4):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        if clip == "norm":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5, foreach=foreach)
        elif clip == "value":
            torch.nn.utils.clip_grad_value_(model.parameters(), 0.05, foreach=foreach)
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adamw", "rmsprop"])
def test_foreach_optimizers_equal_the_for_loop(opt_name):
    with repmode.enabled():
        loop = _train(opt_name, foreach=False)
        fused_list = _train(opt_name, foreach=True)
    assert_bitwise_equal(fused_list, loop, opt_name)


@pytest.mark.parametrize("opt_name", ["sgd", "sgd_plain", "adam", "adamw", "adam_wd_max"])
def test_fused_optimizers_equal_the_for_loop(opt_name):
    with repmode.enabled():
        loop = _train(opt_name, foreach=False)
        fused = _train(opt_name, foreach=False, fused=True)
    assert_bitwise_equal(fused, loop, opt_name)


def test_foreach_adagrad_is_reproducible():
    """torch's foreach Adagrad orders its arithmetic differently from its for-loop form
    (grad * -lr, then addcdiv; the loop does addcdiv with value=-lr), so the two differ in the
    last bits by torch's design; each is reproducible on its own."""
    got = assert_invariant(lambda _: {"p": _train("adagrad", foreach=True)}, torch.zeros(2, 2))
    with repmode.enabled():
        loop = _train("adagrad", foreach=False)
    for a, b in zip(got["p"], loop):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("clip", ["norm", "value"])
def test_gradient_clipping_foreach_equals_for_loop(clip):
    with repmode.enabled():
        loop = _train("sgd", foreach=False, clip=clip)
        lists = _train("sgd", foreach=True, clip=clip)
    assert_bitwise_equal(lists, loop, clip)


def test_foreach_ops_invariant_and_per_tensor(rng):
    def compute(x):
        parts = [x[:5], x[5:9].t(), x[9:]]
        others = [p * 0.5 + 1 for p in parts]
        out = {
            "add": torch._foreach_add(parts, others, alpha=2.0), "mul_s": torch._foreach_mul(parts, 3.0),
            "div_list": torch._foreach_div(parts, others), "sqrt": torch._foreach_sqrt([p.abs() for p in parts]),
            "addcdiv": torch._foreach_addcdiv(parts, others, others, 0.25), "norm": torch._foreach_norm(parts, 2),
            "lerp": torch._foreach_lerp(parts, others, 0.3), "max": torch._foreach_maximum(parts, others),
            "pow": torch._foreach_pow(others, 2.0), "exp": torch._foreach_exp(parts),
        }
        inplace = [p.clone() for p in parts]
        torch._foreach_add_(inplace, 1.5)
        torch._foreach_clamp_min_(inplace, 0.75)
        out["inplace"] = inplace
        out["single"] = [torch.add(p, o, alpha=2.0) for p, o in zip(parts, others)]
        return out
    x = torch.randn(40, 4, generator=rng)
    got = assert_invariant(compute, x)
    assert_bitwise_equal(got["add"], got["single"])


def test_the_written_out_foreach_list_is_every_foreach_overload_whose_single_tensor_op_is_registered():
    """FOREACH_OVERLOADS names each registered _foreach_ overload (so grep finds it); it must not go
    stale when a single-tensor op gains a registration or torch adds a foreach overload."""
    from repmode.kernels import foreach, load
    from repmode.registry import overloads_named

    load()
    present = {name for name in foreach.FOREACH_OVERLOADS if overloads_named(name)}
    assert set(foreach.plannable_overloads()) == present
    registered = {r.name for r in repmode.registrations() if r.family == "foreach"}
    assert registered == present
