"""Training utilities in strict mode: LR schedulers, gradient accumulation, and resuming from a
checkpoint (model, optimizer, scheduler and repmode's random stream) gives the bits of an
uninterrupted run."""
from __future__ import annotations

import io

import torch
from support import assert_bitwise_equal

import repmode


def _make():
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(8, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


def _steps(model, opt, sched, n, micro_batches=2):
    for _ in range(n):
        opt.zero_grad()
        for _ in range(micro_batches):  # gradient accumulation
            x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
            (torch.nn.functional.cross_entropy(model(x), y) / micro_batches).backward()
        opt.step()
        sched.step()


def test_resume_from_checkpoint_equals_uninterrupted_run():
    with repmode.enabled(seed=0):
        model, opt, sched = _make()
        _steps(model, opt, sched, 6)
        uninterrupted = [p.detach().clone() for p in model.parameters()]
    with repmode.enabled(seed=0):
        model, opt, sched = _make()
        _steps(model, opt, sched, 3)
        buf = io.BytesIO()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                    "rng": repmode.get_rng_state()}, buf)
    with repmode.enabled(seed=12345):  # a different seed: the checkpoint's stream state wins
        buf.seek(0)
        ckpt = torch.load(buf)
        model, opt, sched = _make()
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["opt"])
        sched.load_state_dict(ckpt["sched"])
        repmode.set_rng_state(ckpt["rng"])
        _steps(model, opt, sched, 3)
    assert_bitwise_equal([p.detach() for p in model.parameters()], uninterrupted)
