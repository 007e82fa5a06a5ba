"""Training utilities in strict mode: clip_grad_norm_/clip_grad_value_, LR schedulers, RMSprop
and Adagrad (for-loop, foreach, fused); fused Adagrad equals the for-loop form bit for bit."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, num_threads
from torch import nn

import repmode

S = torch.optim.lr_scheduler


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 9), nn.Tanh(), nn.Linear(9, 3))


def _train(opt_fn, sched_fn=None, clip=None, steps=4, threads=2):
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(17, 5, generator=g), torch.randn(17, 3, generator=g)
    m = _model()
    opt = opt_fn(m.parameters())
    sched = sched_fn(opt) if sched_fn else None
    with num_threads(threads), repmode.enabled():
        for _ in range(steps):
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            if clip:
                clip(m.parameters())
            opt.step()
            if isinstance(sched, S.ReduceLROnPlateau):
                sched.step(loss.item())
            elif sched is not None:
                sched.step()
    return [p.detach().clone() for p in m.parameters()]


SGD = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)  # noqa: E731

CASES = {}
for fe in (False, True):
    CASES[f"clip_norm_foreach{fe}"] = dict(
        opt_fn=SGD, clip=lambda p, fe=fe: nn.utils.clip_grad_norm_(p, 0.05, foreach=fe))
    CASES[f"clip_norm_inf_foreach{fe}"] = dict(
        opt_fn=SGD, clip=lambda p, fe=fe: nn.utils.clip_grad_norm_(p, 0.05, norm_type="inf", foreach=fe))
    CASES[f"clip_norm_check_foreach{fe}"] = dict(
        opt_fn=SGD, clip=lambda p, fe=fe: nn.utils.clip_grad_norm_(p, 0.05, error_if_nonfinite=True, foreach=fe))
    CASES[f"clip_value_foreach{fe}"] = dict(opt_fn=SGD, clip=lambda p, fe=fe: nn.utils.clip_grad_value_(p, 0.01,
                                                                                                         foreach=fe))
    for name, kw in (("rmsprop", {}), ("rmsprop_momentum_centered", dict(momentum=0.9, centered=True,
                                                                         weight_decay=0.01)),
                     ("rmsprop_maximize", dict(alpha=0.9, eps=1e-6, maximize=True))):
        CASES[f"{name}_foreach{fe}"] = dict(opt_fn=lambda p, kw=kw, fe=fe: torch.optim.RMSprop(p, lr=0.01,
                                                                                             foreach=fe, **kw))
    for name, kw in (("adagrad", {}), ("adagrad_all", dict(lr_decay=0.01, weight_decay=0.01,
                                                            initial_accumulator_value=0.1, maximize=True))):
        CASES[f"{name}_foreach{fe}"] = dict(opt_fn=lambda p, kw=kw, fe=fe: torch.optim.Adagrad(p, lr=0.01,
                                                                                             foreach=fe, **kw))
CASES["adagrad_fused"] = dict(opt_fn=lambda p: torch.optim.Adagrad(p, lr=0.01, fused=True))
for name, sched in (("step", lambda o: S.StepLR(o, 2, 0.5)), ("cosine", lambda o: S.CosineAnnealingLR(o, 10)),
                    ("onecycle", lambda o: S.OneCycleLR(o, 0.1, total_steps=10)),
                    ("lambda", lambda o: S.LambdaLR(o, lambda e: 0.9 ** e)),
                    ("plateau", lambda o: S.ReduceLROnPlateau(o, patience=0))):
    CASES[f"sched_{name}"] = dict(opt_fn=SGD, sched_fn=sched)


@pytest.mark.parametrize("name", list(CASES))
def test_strict_and_thread_invariant(name):
    one = _train(**CASES[name], threads=1)
    three = _train(**CASES[name], threads=3)
    for a, b in zip(one, three):
        assert_bitwise_equal(a, b, name)


ADAGRAD_KW = [dict(), dict(lr_decay=0.05, weight_decay=0.02, initial_accumulator_value=0.3),
              dict(maximize=True, eps=1e-4)]


@pytest.mark.parametrize("kw", ADAGRAD_KW)
def test_fused_adagrad_equals_for_loop(kw):
    loop = _train(lambda p: torch.optim.Adagrad(p, lr=0.02, foreach=False, **kw))
    fused = _train(lambda p: torch.optim.Adagrad(p, lr=0.02, fused=True, **kw))
    for a, b in zip(loop, fused):
        assert_bitwise_equal(a, b, "fused vs for-loop Adagrad")


@pytest.mark.parametrize("kw", [dict(), dict(momentum=0.9, centered=True, weight_decay=0.01)])
def test_foreach_rmsprop_equals_for_loop(kw):
    loop = _train(lambda p: torch.optim.RMSprop(p, lr=0.01, foreach=False, **kw))
    fe = _train(lambda p: torch.optim.RMSprop(p, lr=0.01, foreach=True, **kw))
    for a, b in zip(loop, fe):
        assert_bitwise_equal(a, b, "foreach vs for-loop RMSprop")


def test_clip_grad_norm_foreach_equals_for_loop():
    for norm_type in (2.0, "inf", 1.0):
        a = _train(SGD, clip=lambda p: nn.utils.clip_grad_norm_(p, 0.05, norm_type=norm_type, foreach=False))
        b = _train(SGD, clip=lambda p: nn.utils.clip_grad_norm_(p, 0.05, norm_type=norm_type, foreach=True))
        for x, y in zip(a, b):
            assert_bitwise_equal(x, y, f"clip_grad_norm_ norm_type={norm_type}")


@pytest.mark.parametrize("foreach", [False, True])
def test_clip_grad_norm_error_if_nonfinite(foreach):
    p = nn.Parameter(torch.ones(3))
    p.grad = torch.tensor([1.0, float("inf"), 2.0])
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="non-finite"):
            nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True, foreach=foreach)


def test_fused_adagrad_with_grad_scale_refused():
    p = torch.ones(3)
    with repmode.enabled():
        with pytest.raises(repmode.UnsupportedOpError, match="GradScaler"):
            torch.ops.aten._fused_adagrad_([p], [torch.ones(3)], [torch.zeros(3)], [torch.ones(())], lr=0.1,
                                           lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False,
                                           grad_scale=torch.ones(()))


def test_grad_scaler_ops_match_torch():
    g = torch.Generator().manual_seed(0)
    clean = [torch.randn(5, generator=g) * 1000, torch.randn(2, 3, generator=g)]
    dirty = [clean[0].clone(), clean[1].clone()]
    dirty[1][0, 1] = float("inf")
    inv_scale = torch.tensor(1 / 1024.0)
    for grads in (clean, dirty):
        ours, theirs = [t.clone() for t in grads], [t.clone() for t in grads]
        found_ours, found_theirs = torch.zeros(()), torch.zeros(())
        with repmode.enabled():
            torch._amp_foreach_non_finite_check_and_unscale_(ours, found_ours, inv_scale)
        torch._amp_foreach_non_finite_check_and_unscale_(theirs, found_theirs, inv_scale)
        assert found_ours.item() == found_theirs.item() == (1.0 if grads is dirty else 0.0)
        for a, b in zip(ours, theirs):
            finite = torch.isfinite(b)
            assert torch.equal(a[finite].view(torch.int32), b[finite].view(torch.int32))  # one multiply each
    # the scale's update rule, step by step: growth after `interval` clean steps, backoff on inf
    scale_ours, scale_theirs = torch.tensor(2.0 ** 16), torch.tensor(2.0 ** 16)
    track_ours, track_theirs = torch.zeros((), dtype=torch.int32), torch.zeros((), dtype=torch.int32)
    for found in [0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0]:
        inf = torch.tensor(float(found))
        with repmode.enabled():
            torch._amp_update_scale_(scale_ours, track_ours, inf, 2.0, 0.5, 3)
        torch._amp_update_scale_(scale_theirs, track_theirs, inf, 2.0, 0.5, 3)
        assert scale_ours.item() == scale_theirs.item() and track_ours.item() == track_theirs.item()


def _fp16_scaler_run(threads: int):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    with repmode.enabled(seed=0):
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 14, growth_interval=2)
        x, y = torch.randn(32, 8) * 100, torch.randint(0, 3, (32,))
        scales = []
        for _ in range(5):
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
    return repmode.digest(model), scales


def test_grad_scaler_with_fp16_autocast_runs_strict_and_reproducibly():
    before = torch.get_num_threads()
    try:
        one, two = _fp16_scaler_run(1), _fp16_scaler_run(2)
    finally:
        torch.set_num_threads(before)
    assert one == two
    assert len(set(one[1])) > 1  # the scale moved (grew, or backed off on an overflow)


@pytest.mark.parametrize("foreach", [False, True])
def test_clip_grad_norm_of_a_gradient_whose_square_overflows_is_inf_by_design(foreach):
    """The 2-norm is sqrt of the plain canonical sum of squares (semantics "Reductions", no
    scaling): float64's largest value squares to inf, so the norm is inf (native torch takes |g|
    for a one-element gradient and returns it). error_if_nonfinite then raises; without it the
    total is inf and the gradient scales by max_norm / inf = 0."""
    big = torch.finfo(torch.float64).max
    p = nn.Parameter(torch.zeros((), dtype=torch.float64))
    p.grad = torch.tensor(big, dtype=torch.float64)
    with repmode.enabled(), pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True, foreach=foreach)
    with repmode.enabled():
        total = nn.utils.clip_grad_norm_([p], 1.0, foreach=foreach)
    assert total.item() == float("inf") and p.grad.item() == 0.0
