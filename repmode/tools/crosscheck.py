"""CPU vs CUDA, bit for bit: ``python -m repmode crosscheck``.

Runs a battery of ops (forward and backward, random draws included) and every training example
once on the CPU (2 threads) and once on a GPU, all inside ``repmode.enabled()``, and prints one
row per op or example digest: name, CPU digest, CUDA digest, equal?  Exit status 0 when every row
is equal, 1 when one differs or fails, 2 when there is no GPU or no repmode._C_cuda to compare
with (docs/cuda.md).
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import Callable

import torch

import repmode

from .. import _ext

# ---- the op battery: each entry builds its inputs on the CPU from a fixed seed, moves them to
# the device, and returns the tensors whose digests are compared ---------------------------------

F = torch.nn.functional


def _inputs(device, *shapes, seed: int = 0, grad: bool = False):
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape in shapes:
        t = torch.randn(shape, generator=g, dtype=torch.float32).to(device)
        out.append(t.requires_grad_() if grad else t)
    return out


def _with_grads(y: torch.Tensor, *leaves: torch.Tensor) -> list[torch.Tensor]:
    """y and the gradients of y's sum against every leaf (the backward kernels ride along)."""
    y.backward(torch.ones_like(y))
    return [y.detach()] + [leaf.grad for leaf in leaves]


def _mm(d):
    a, b = _inputs(d, (257, 129), (129, 65))
    return [a @ b, torch.addmm(a[:, :65], a, b, beta=0.5, alpha=2.0),
            torch.bmm(a.view(1, 257, 129), b.view(1, 129, 65))]


def _sums(d):
    (x,) = _inputs(d, (4096 * 37 + 5,))
    m = x[: 4096 * 36].view(96, -1)
    return [x.sum(), x.mean(), m.sum(1), m.sum(0), m.var(1), m.std(0), x.prod(), torch.linalg.vector_norm(m, dim=1)]


def _extremes(d):
    (x,) = _inputs(d, (300, 517))
    return [x.amax(1), x.argmax(0), x.max(1).indices, x.cumsum(1), torch.logsumexp(x, 1)]


def _softmax_ce(d):
    x, = _inputs(d, (64, 1000), grad=True)
    target = torch.arange(64, device=d) * 7 % 1000
    loss = F.cross_entropy(x, target)
    return _with_grads(loss, x) + [F.softmax(x.detach(), 1), F.log_softmax(x.detach(), 0)]


def _math(d):
    (x,) = _inputs(d, (4099,))
    return [torch.exp(x), torch.log(x.abs()), torch.tanh(x), torch.sigmoid(x), F.gelu(x), torch.erf(x), x.pow(3.5),
            torch.sin(x * 100), torch.sqrt(x.abs()), torch.rsqrt(x.abs()), F.silu(x), torch.where(x > 0, x, -x)]


def _conv(d):
    x, w, b = _inputs(d, (4, 3, 17, 19), (8, 3, 3, 3), (8,), grad=True)
    y = F.conv2d(x, w, b, stride=2, padding=1)
    return _with_grads(y, x, w, b)


def _pool(d):
    (x,) = _inputs(d, (2, 5, 33, 31), grad=True)
    y = F.max_pool2d(x, 3, 2, 1) + F.avg_pool2d(x, 3, 2, 1)
    return _with_grads(y, x)


def _norms(d):
    x, w, b = _inputs(d, (8, 16, 9, 7), (16,), (16,), grad=True)
    y = F.layer_norm(x, (9, 7)) + F.group_norm(x, 4, w, b) + F.batch_norm(x, None, None, w, b, training=True)
    return _with_grads(y, x, w, b)


def _lstm(d):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(12, 20, num_layers=2).to(d)
    (x,) = _inputs(d, (7, 3, 12), grad=True)
    out, _ = lstm(x)
    return _with_grads(out, x, lstm.weight_hh_l0)


def _attention(d):
    q, k, v = _inputs(d, (2, 4, 33, 16), (2, 4, 40, 16), (2, 4, 40, 16), grad=True)
    y = F.scaled_dot_product_attention(q, k, v)
    return _with_grads(y, q, k, v)


def _attention_dropout(d):
    q, k, v = _inputs(d, (2, 4, 33, 16), (2, 4, 40, 16), (2, 4, 40, 16), grad=True)
    mask = _inputs(d, (33, 40), seed=1)[0]
    torch.manual_seed(5)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.2) + \
        F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)
    return _with_grads(y, q, k, v)


def _random(d):
    torch.manual_seed(123)
    x = torch.ones(1001, device=d)
    return [torch.rand(1001, device=d), torch.randn(1001, device=d, dtype=torch.float64),
            torch.randint(0, 1000, (1001,), device=d), F.dropout(x, 0.3), torch.empty(99, device=d).normal_(2, 3)]


def _adam(d):
    torch.manual_seed(0)
    model = torch.nn.Linear(33, 7).to(d)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    (x,) = _inputs(d, (16, 33))
    for _ in range(3):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    return [model.weight.detach(), model.bias.detach()]


BATTERY: dict[str, Callable[[str], list[torch.Tensor]]] = {
    "mm/addmm/bmm": _mm, "sum/mean/var/prod/norm": _sums, "max/argmax/cumsum/logsumexp": _extremes,
    "cross_entropy (+backward), softmax": _softmax_ce, "exp/log/tanh/gelu/erf/pow/...": _math,
    "conv2d (+backward)": _conv, "max/avg_pool2d (+backward)": _pool, "layer/group/batch norm (+backward)": _norms,
    "LSTM (+backward)": _lstm, "scaled_dot_product_attention (+backward)": _attention,
    "sdpa with dropout, float/causal masks (+backward)": _attention_dropout,
    "rand/randn/randint/dropout/normal_": _random, "Adam, 3 steps": _adam,
}


def _run_op(fn, device: str, threads: int | None):
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        with repmode.enabled(strict=True, seed=0):
            return repmode.digest([t.detach() for t in fn(device)])
    finally:
        torch.set_num_threads(before)


# ---- the examples: run as scripts, their digest lines compared ---------------------------------

EXAMPLES = ("train_mlp.py", "train_cnn.py", "train_transformer.py", "train_lstm.py")
_DIGEST_LINE = re.compile(r"^(initial parameters|trained parameters|test logits):\s+(\S+)", re.M)


def examples_dir() -> pathlib.Path | None:
    """The repository's examples/ (present in a source checkout or an editable install)."""
    path = pathlib.Path(__file__).resolve().parents[2] / "examples"
    return path if (path / EXAMPLES[0]).is_file() else None


def _run_example(path: pathlib.Path, device: str, epochs: int) -> dict[str, str]:
    cmd = [sys.executable, str(path), "--device", device, "--epochs", str(epochs)]
    if device == "cpu":
        cmd += ["--threads", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    if proc.returncode != 0:
        raise RuntimeError(f"{path.name} --device {device} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return dict(_DIGEST_LINE.findall(proc.stdout))


# ---- the table ---------------------------------------------------------------------------------

def gpu_unavailable_reason() -> str | None:
    if _ext.CUDA is None:
        return _ext.CUDA_LOAD_ERROR or ("repmode._C_cuda is not built "
                                        "(REPMODE_CUDA=1 pip install --no-build-isolation ...)")
    if not torch.cuda.is_available() or _ext.CUDA.device_count() == 0:
        return "no CUDA device is visible to torch"
    return None


def crosscheck(epochs: int = 1, examples: bool = True, out=sys.stdout) -> int:
    reason = gpu_unavailable_reason()
    if reason:
        print(f"repmode crosscheck: nothing to compare: {reason}", file=out)
        return 2
    rows: list[tuple[str, str, str, str]] = []
    for name, fn in BATTERY.items():
        try:
            a, b = _run_op(fn, "cpu", 2), _run_op(fn, "cuda", None)
            rows.append((name, a, b, "equal" if a == b else "DIFFERENT"))
        except Exception as exc:  # a failing row is reported, the others still run
            rows.append((name, "-", "-", f"FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"))
    folder = examples_dir() if examples else None
    for script in (EXAMPLES if folder else ()):
        try:
            a, b = _run_example(folder / script, "cpu", epochs), _run_example(folder / script, "cuda", epochs)
            for what in ("initial parameters", "trained parameters", "test logits"):
                da, db = a.get(what, "-"), b.get(what, "-")
                rows.append((f"{script}: {what}", da, db, "equal" if da == db != "-" else "DIFFERENT"))
        except Exception as exc:
            rows.append((script, "-", "-", f"FAILED: {str(exc)[:160]}"))
    gpu = _ext.CUDA.device_name(torch.cuda.current_device())
    print(f"repmode crosscheck: CPU (2 threads) vs CUDA ({gpu}), torch {torch.__version__}", file=out)
    print("| op / example | CPU digest | CUDA digest | equal? |\n|---|---|---|---|", file=out)
    for row in rows:
        print("| " + " | ".join(row) + " |", file=out)
    if examples and folder is None:
        print("(examples/ not found next to the package: only the op battery ran)", file=out)
    return 0 if all(r[3] == "equal" for r in rows) else 1
