"""Memory: repmode's kernels make no hidden input-sized temporaries, and a training loop does not
grow the process. Both run in a subprocess (address-space limits and RSS are per process)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The cap: the address space in use once the inputs exist (the baseline, measured in the child
# after a warm-up of the same ops at the same thread count, so thread stacks and malloc arenas
# already exist), plus the output, plus a 64 MiB margin. Measured on the dev machine the ops need
# under 2 MiB beyond inputs + output (they pass with a 2 MiB margin); 64 MiB leaves room for
# allocator rounding and is a quarter of one 256 MiB input, so any hidden copy of an input (or a
# float64 accumulation buffer of it) fails. The control (a clone under the same cap) shows the cap
# bites.
_AS_SCRIPT = textwrap.dedent("""
    import json, resource, torch, repmode
    PAGE = resource.getpagesize()
    MARGIN = 64 * 2**20
    vm = lambda: int(open("/proc/self/statm").read().split()[0]) * PAGE
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    cases = {  # name: (inputs at scale 1/s, the op, output bytes)
        "sum": (lambda s: (torch.randn(64 * 2**20 // s, generator=g),), lambda x: x.sum(), 4),
        "sum(dim)": (lambda s: (torch.randn(16 * 2**20 // s, 4, generator=g),), lambda x: x.sum(0), 16),
        "mm": (lambda s: (torch.randn(16384 // s, 4096, generator=g), torch.randn(4096, 64, generator=g)),
               lambda a, b: a @ b, 16384 * 64 * 4),
        "add": (lambda s: (torch.randn(32 * 2**20 // s, generator=g), torch.randn(32 * 2**20 // s, generator=g)),
                lambda a, b: a + b, 128 * 2**20),
        "softmax": (lambda s: (torch.randn(16 * 2**20 // s, 4, generator=g),), lambda x: torch.softmax(x, -1),
                    256 * 2**20),
        "control: clone": (lambda s: (torch.randn(64 * 2**20 // s, generator=g),), lambda x: x.clone(), 0),
    }
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    report = {}
    for name, (make, op, out_bytes) in cases.items():
        with repmode.enabled():
            op(*make(64))
        inputs = make(1)
        base = vm()
        resource.setrlimit(resource.RLIMIT_AS, (base + out_bytes + MARGIN, hard))
        try:
            with repmode.enabled():
                out = op(*inputs)
            report[name] = "ok"
            del out
        except (MemoryError, RuntimeError) as exc:
            report[name] = type(exc).__name__ + ": " + str(exc)[:200]
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        report[name + " inputs MiB"] = sum(t.numel() * t.element_size() for t in inputs) / 2**20
        del inputs
    print(json.dumps(report))
""")


def _run(script: str, timeout: int = 240) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_large_ops_need_no_hidden_temporaries():
    report = _run(_AS_SCRIPT)
    assert report["control: clone"].startswith("RuntimeError"), report  # the cap is real
    for name in ("sum", "sum(dim)", "mm", "add", "softmax"):
        assert report[name] == "ok", f"{name}: {report[name]}"
        assert report[name + " inputs MiB"] >= 256


# RSS at step 100 and step 1000 of the MLP example's model and optimizer (SGD with momentum,
# Nesterov, weight decay; dropout) under repmode. Measured on the dev machine: +0.08 MiB over
# those 900 steps (allocator noise). The 4 MiB slack absorbs malloc's heap growth and trimming
# granularity; a leak of anything per step larger than 4.6 KiB -- e.g. one retained activation of
# the first layer (64 x 128 float32 = 32 KiB, 28 MiB over 900 steps) -- fails it.
_RSS_SCRIPT = textwrap.dedent("""
    import json, resource, sys, torch, repmode
    from torch import nn
    sys.path.insert(0, "examples")
    from train_mlp import make_model, make_optimizer
    PAGE = resource.getpagesize()
    rss = lambda: int(open("/proc/self/statm").read().split()[1]) * PAGE
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(64 * 16, 64, generator=g)
    y = torch.randint(0, 10, (64 * 16,), generator=g)
    marks = {}
    with repmode.enabled(seed=0):
        model = make_model()
        opt = make_optimizer(model)
        for step in range(1, 1001):
            i = step % 16
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x[i * 64:(i + 1) * 64]), y[i * 64:(i + 1) * 64])
            loss.backward()
            opt.step()
            if step in (100, 1000):
                marks[step] = rss()
    print(json.dumps({"rss100": marks[100], "rss1000": marks[1000], "loss": loss.item()}))
""")


def test_rss_does_not_grow_over_1000_training_steps():
    report = _run(_RSS_SCRIPT)
    growth = report["rss1000"] - report["rss100"]
    assert growth < 4 * 2**20, f"RSS grew by {growth / 2**20:.2f} MiB from step 100 to step 1000"
    assert report["loss"] < 2.3  # it trained (chance level is ln 10 = 2.30)
