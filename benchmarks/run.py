"""repmode's benchmark runner: each case times native torch and repmode in the same run.

    python benchmarks/run.py                     # print the table
    python benchmarks/run.py --write BENCHMARKS.md

Times are the best of several repeats (the machine is shared and noisy; the minimum is the
least disturbed). Ratios compare the two columns of one run; absolute numbers drift.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import subprocess
import sys

import torch
from timing import best_time, compare
from torch.utils._python_dispatch import TorchDispatchMode

import repmode

# The training-step cases time the models of examples/ (plain modules, importable).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))


class PassThroughMode(TorchDispatchMode):
    """The cheapest possible dispatch mode: the baseline for repmode's per-op overhead."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def case_dispatch_overhead():
    x, y = torch.randn(1), torch.randn(1)
    fn = lambda: x + y  # noqa: E731
    inner = 20000
    native = bare = rep = float("inf")
    for _ in range(10):  # interleaved, so slow drifts of the machine hit all three alike
        native = min(native, best_time(fn, 3, inner))
        with PassThroughMode():
            bare = min(bare, best_time(fn, 3, inner))
        with repmode.enabled():
            rep = min(rep, best_time(fn, 3, inner))
    us = 1e6
    return [
        ("dispatch: 1-element x + y, native", f"{native * us:.2f} µs", "", ""),
        ("dispatch: bare pass-through mode", f"{bare * us:.2f} µs", "", ""),
        ("dispatch: repmode", f"{rep * us:.2f} µs", "",
         f"+{(rep - bare) * us:.2f} µs over pass-through"),
    ]


def _row(name, native, rep, unit_work=None, unit=""):
    if unit_work is None:
        return (name, f"{native * 1e3:.3f} ms", f"{rep * 1e3:.3f} ms", f"{rep / native:.2f}× time")
    return (name, f"{unit_work / native:.1f} {unit}", f"{unit_work / rep:.1f} {unit}",
            f"{native / rep:.2f}× throughput")


def case_mm(n: int):
    a, b = torch.randn(n, n), torch.randn(n, n)
    native, rep = compare(lambda: torch.mm(a, b), repeats=3 if n >= 2048 else 5)
    return [_row(f"mm {n}³ float32", native, rep, 2 * n**3 / 1e9, "GFLOP/s")]


def case_sum(n: int):
    x = torch.randn(n)
    native, rep = compare(lambda: x.sum(), repeats=10)
    return [_row(f"sum {n // 2**20}M float32", native, rep, n * 4 / 1e9, "GB/s")]


def case_tall_skinny():
    a, b = torch.randn(512, 65536), torch.randn(65536, 512)
    native, rep = compare(lambda: torch.mm(a, b), repeats=3)
    return [_row("mm 512×65536 · 65536×512 (weight-gradient shape)", native, rep, 2 * 512 * 512 * 65536 / 1e9,
                 "GFLOP/s")]


def case_bmm():
    a, b = torch.randn(64, 128, 64), torch.randn(64, 64, 128)
    native, rep = compare(lambda: torch.bmm(a, b), repeats=10)
    return [_row("bmm (64, 128×64 · 64×128)", native, rep, 2 * 64 * 128 * 64 * 128 / 1e9, "GFLOP/s")]


def case_sum_dims():
    x = torch.randn(4096, 4096)
    rows = []
    for dim in (0, 1):
        native, rep = compare(lambda: x.sum(dim), repeats=10)
        rows.append(_row(f"sum over dim {dim} of 4096×4096", native, rep, x.numel() * 4 / 1e9, "GB/s"))
    return rows


def case_var_mean():
    x = torch.randn(8192, 1024)
    native, rep = compare(lambda: torch.var_mean(x, -1), repeats=10)
    return [_row("var_mean over the last dim of (8192, 1024)", native, rep, x.numel() * 4 / 1e9, "GB/s")]


def case_softmax():
    x = torch.randn(4096, 1024)
    rows = []
    for name, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        native, rep = compare(lambda: fn(x, -1), repeats=10)
        rows.append(_row(f"{name} (4096, 1024) over the last dim", native, rep, x.numel() * 4 / 1e9, "GB/s"))
    return rows


def case_sort_topk():
    x = torch.randn(4096, 1024)
    native, rep = compare(lambda: torch.sort(x, -1), repeats=5)
    rows = [_row("sort of (4096, 1024) over the last dim (stable in repmode)", native, rep)]
    native, rep = compare(lambda: torch.topk(x, 50, -1), repeats=5)
    rows.append(_row("topk k=50 of (4096, 1024) over the last dim", native, rep))
    return rows


def case_unary_math():
    x = torch.randn(16 * 2**20)
    xp = x.abs() + 1e-3
    rows = []
    for name, fn, arg, note in (
            ("exp", torch.exp, x, "correctly rounded in repmode"),
            ("log", torch.log, xp, "correctly rounded in repmode"),
            ("tanh", torch.tanh, x, "correctly rounded in repmode"),
            ("sigmoid", torch.sigmoid, x, "correctly rounded in repmode"),
            ("gelu", torch.nn.functional.gelu, x, "within 1 ulp in repmode")):
        native, rep = compare(lambda: fn(arg), repeats=5)
        rows.append(_row(f"{name} of 16M float32 ({note})", native, rep, arg.numel() * 8 / 1e9, "GB/s"))
    return rows


def case_activation_backward():
    """gelu_backward (erf and tanh forms) and silu_backward of 16M float32 (grad, input) pairs: the
    double formulas rounded once (csrc/common/elementwise.h), through the AVX2/AVX-512 lanes of
    csrc/cpu/vec_activation_backward.cpp (same bits) against native torch."""
    g = torch.Generator().manual_seed(0)
    grad, x = torch.randn(16 * 2**20, generator=g), torch.randn(16 * 2**20, generator=g)
    aten = torch.ops.aten
    rows = []
    for name, fn in (("gelu_backward", lambda: aten.gelu_backward(grad, x)),
                     ("gelu_backward (approximate='tanh')", lambda: aten.gelu_backward(grad, x, approximate="tanh")),
                     ("silu_backward", lambda: aten.silu_backward(grad, x))):
        native, rep = compare(fn, repeats=5)
        rows.append(_row(f"{name} of 16M float32 (double formula rounded once in repmode)", native, rep,
                         x.numel() * 12 / 1e9, "GB/s"))
    return rows


def case_math_tail():
    """atan2 (rotary/polar code), tan, sinh of 16M float32: the correctly rounded routines of
    csrc/common/math_atan.h and math_tail.h (atan2: AVX2 lanes; tan, sinh: AVX2/AVX-512 lanes of
    csrc/cpu/vec_tail.cpp, same bits) against native torch."""
    g = torch.Generator().manual_seed(0)
    y, x = torch.randn(16 * 2**20, generator=g), torch.randn(16 * 2**20, generator=g)
    rows = []
    native, rep = compare(lambda: torch.atan2(y, x), repeats=5)
    rows.append(_row("atan2 of 16M float32 pairs (correctly rounded in repmode)", native, rep, y.numel() * 12 / 1e9,
                     "GB/s"))
    for name, fn in (("tan", torch.tan), ("sinh", torch.sinh)):
        native, rep = compare(lambda: fn(x), repeats=5)
        rows.append(_row(f"{name} of 16M float32 (correctly rounded in repmode)", native, rep, x.numel() * 8 / 1e9,
                         "GB/s"))
    return rows


def case_math_special():
    """lgamma, digamma and erfinv of 16M float32 (csrc/common/math_special.h: one double formula per
    element, rounded once; the AVX2/AVX-512 array versions of csrc/cpu/vec_special.cpp, same bits)
    against native torch."""
    g = torch.Generator().manual_seed(0)
    x = torch.rand(16 * 2**20, generator=g) * 20 + 0.01
    u = torch.rand(16 * 2**20, generator=g) * 1.9 - 0.95  # trunc_normal_'s range of erfinv arguments
    rows = []
    for name, fn, arg in (("lgamma", torch.lgamma, x), ("digamma", torch.digamma, x), ("erfinv", torch.erfinv, u)):
        native, rep = compare(lambda: fn(arg), repeats=3)
        rows.append(_row(f"{name} of 16M float32 (double formula rounded once in repmode)", native, rep,
                         arg.numel() * 8 / 1e9, "GB/s"))
    return rows


def case_scatter_add():
    """16M source elements added into 1M destinations (about 16 contributions each, random indices):
    repmode adds them in increasing source position (the compiled walk: threads own destination
    ranges, each scanning the sources in order). index_add: 64K rows of 256 into 4K rows (16
    contributions per destination element)."""
    n, m = 16 * 2**20, 2**20
    gen = torch.Generator().manual_seed(0)
    src, index = torch.randn(n, generator=gen), torch.randint(0, m, (n,), generator=gen)
    base = torch.zeros(m)
    native, rep = compare(lambda: base.scatter_add(0, index, src), repeats=3)
    rows = [_row("scatter_add of 16M float32 into 1M (random indices)", native, rep)]
    source, rows_index = torch.randn(2**16, 256, generator=gen), torch.randint(0, 2**12, (2**16,), generator=gen)
    target = torch.zeros(2**12, 256)
    native, rep = compare(lambda: target.index_add(0, rows_index, source), repeats=3)
    rows.append(_row("index_add of 16M float32 (64K rows of 256) into 4K rows (random indices)", native, rep))
    return rows


def case_mlp_step():
    torch.manual_seed(0)
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    return [_training_step_row("MLP training step (64→128→10, batch 64, SGD)", model, opt, x, y, inner=20)]


def case_conv():
    """The issue's convolution: (32, 64, 56, 56) x (64, 64, 3, 3), stride 1, padding 1, float32."""
    aten = torch.ops.aten
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 64, 56, 56, generator=g)
    w = torch.randn(64, 64, 3, 3, generator=g) * 0.05
    b = torch.randn(64, generator=g)
    gy = torch.randn(32, 64, 56, 56, generator=g)
    gflop = 2 * 32 * 64 * 56 * 56 * 64 * 9 / 1e9
    args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    fwd = lambda: aten.convolution(x, w, b, *args)  # noqa: E731
    bwd = lambda: aten.convolution_backward(gy, x, w, [64], *args, [True, True, True])  # noqa: E731
    native, rep = compare(fwd, repeats=3)
    rows = [_row("conv2d forward (32,64,56,56)×(64,64,3,3)", native, rep, gflop, "GFLOP/s")]
    native, rep = compare(bwd, repeats=3)
    rows.append(_row("conv2d backward (grad input + weight + bias)", native, rep, 2 * gflop, "GFLOP/s"))
    return rows


def case_upsample():
    """Bilinear upsampling x2 of (16, 64, 64, 64) float32 (align_corners=False), forward and the
    backward op (grad of the (16, 64, 128, 128) output)."""
    aten = torch.ops.aten
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 64, 64, 64, generator=g)
    gy = torch.randn(16, 64, 128, 128, generator=g)
    fwd = lambda: aten.upsample_bilinear2d(x, [128, 128], False, 2.0, 2.0)  # noqa: E731
    bwd = lambda: aten.upsample_bilinear2d_backward(gy, [128, 128], [16, 64, 64, 64], False, 2.0, 2.0)  # noqa: E731
    both = lambda: (fwd(), bwd())  # noqa: E731
    gbytes = (x.numel() + gy.numel()) * 4 * 2 / 1e9  # each of the two ops reads one and writes the other
    native, rep = compare(both, repeats=3)
    return [_row("upsample_bilinear2d ×2 forward + backward (16,64,64,64)", native, rep, gbytes, "GB/s")]


def case_grid_sample():
    """grid_sample (bilinear, zeros padding, align_corners=False) of (16, 64, 64, 64) float32 with a
    same-size grid (a small random warp of the identity), forward and the backward op (grad_input
    and grad_grid)."""
    aten = torch.ops.aten
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 64, 64, 64, generator=g)
    theta = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]) + 0.1 * torch.randn(16, 2, 3, generator=g)
    grid = torch.nn.functional.affine_grid(theta, [16, 64, 64, 64], align_corners=False)
    gy = torch.randn(16, 64, 64, 64, generator=g)
    fwd = lambda: aten.grid_sampler_2d(x, grid, 0, 0, False)  # noqa: E731
    bwd = lambda: aten.grid_sampler_2d_backward(gy, x, grid, 0, 0, False, [True, True])  # noqa: E731
    both = lambda: (fwd(), bwd())  # noqa: E731
    # forward reads x and the grid and writes the output; backward reads gy, x and the grid and
    # writes grad_input and grad_grid
    gbytes = (2 * x.numel() + 2 * grid.numel() + 3 * x.numel() + 2 * grid.numel()) * 4 / 1e9
    native, rep = compare(both, repeats=3)
    return [_row("grid_sampler_2d bilinear forward + backward (16,64,64,64), grid 64×64", native, rep, gbytes,
                 "GB/s")]


def _training_step_row(label, model, optimizer, x, y, clip_grad_norm=None, inner=5, amp=None):
    def step():
        optimizer.zero_grad()
        with (torch.autocast("cpu", dtype=amp) if amp is not None else contextlib.nullcontext()):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()

    return _step_row(label, step, rounds=3, repeats=5, inner=inner)


def _step_row(label, step, rounds, repeats, inner=1):
    """A training step timed interleaved: native, the pass-through mode (the floor any
    TorchDispatchMode pays for the step's small ops) and repmode."""
    native = bare = rep = float("inf")
    for _ in range(rounds):
        native = min(native, best_time(step, repeats, inner))
        with PassThroughMode():
            bare = min(bare, best_time(step, repeats, inner))
        with repmode.enabled():
            rep = min(rep, best_time(step, repeats, inner))
    name, n_text, r_text, ratio = _row(label, native, rep)
    return name, n_text, r_text, f"{ratio} (pass-through mode alone: {bare / native:.2f}×)"


def _example_step(module: str, label: str, clip_grad_norm=None, inner=5, amp=None, **model_args):
    """One training step (forward, backward, optimizer) of a model of examples/, batch 64."""
    example = __import__(module)
    torch.manual_seed(0)
    model = example.MODEL(**model_args)
    x, y = torch.rand(64, 64), torch.randint(0, 10, (64,))
    return [_training_step_row(label, model, example.make_optimizer(model), x, y, clip_grad_norm, inner, amp)]


def case_models():
    """The mid-size model group (issue 29): one AdamW step of each model of benchmarks/models.py,
    native, the pass-through mode and repmode interleaved."""
    from models import MODELS, build
    return [_step_row(f"model step: {label}, AdamW", build(name)[2], rounds=2, repeats=3)
            for name, (label, _) in MODELS.items()]


def case_fft():
    """issue 28: a batch of 1,024 complex64 transforms of length 1,024, one of length 2^20, and a
    prime-length (Bluestein) rfft batch (benchmarks/bench_fft.py)."""
    import bench_fft
    return [_row(name, native, rep) for name, native, rep in bench_fft.main(threads=torch.get_num_threads())]


def case_linalg():
    """issue 27: Cholesky, QR and eigh of a 512 x 512 float32 matrix (benchmarks/bench_linalg.py's
    inputs), one call each timed (eigh takes seconds in repmode)."""
    from bench_linalg import _inputs
    x, spd, sym, _ = (t.float() for t in _inputs(512))
    rows = []
    for name, fn, repeats in (("cholesky", lambda: torch.linalg.cholesky(spd), 3),
                              ("qr", lambda: torch.linalg.qr(x), 2), ("eigh", lambda: torch.linalg.eigh(sym), 1)):
        native, rep = compare(fn, repeats, rounds=1)
        rows.append(_row(f"linalg.{name} of 512×512 float32", native, rep))
    return rows


def case_cnn_step():
    return _example_step("train_cnn", "CNN training step (examples/train_cnn.py, batch 64, SGD momentum)")


def case_transformer_step():
    return _example_step("train_transformer", "Transformer training step (d_model 128, 4 heads, 2 layers, "
                         "64 tokens, batch 64, AdamW + clip_grad_norm_)", clip_grad_norm=1.0, inner=2,
                         d_model=128, heads=4, layers=2, patch=1)


def case_transformer_bf16_step():
    return _example_step("train_transformer", "Transformer training step under torch.autocast('cpu', bfloat16) "
                         "(same model and batch)", clip_grad_norm=1.0, inner=2, amp=torch.bfloat16,
                         d_model=128, heads=4, layers=2, patch=1)


def case_lstm_step():
    return _example_step("train_lstm", "LSTM training step (examples/train_lstm.py, 8 steps, hidden 64, "
                         "batch 64, Adam)")


def _trace_overhead_rows(label, model, optimizer, x, y, inner):
    """The same step without and with repmode.trace, under repmode and natively (traces to a temp file)."""
    import tempfile

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for native in (False, True):
            plain = traced = float("inf")
            for _ in range(3):  # interleaved
                with (contextlib.nullcontext() if native else repmode.enabled()):
                    plain = min(plain, best_time(step, 5, inner))
                with repmode.trace(os.path.join(folder, "bench.trace"), native=native):
                    traced = min(traced, best_time(step, 5, inner))
            kind = "native" if native else "repmode"
            rows.append((f"{label}, {kind}: untraced vs repmode.trace{'(native=True)' if native else ''}",
                         f"{plain * 1e3:.3f} ms", f"{traced * 1e3:.3f} ms", f"{traced / plain:.2f}× time traced"))
    return rows


def case_trace():
    torch.manual_seed(0)
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    rows = _trace_overhead_rows("MLP training step", mlp, torch.optim.SGD(mlp.parameters(), lr=0.05, momentum=0.9),
                                x, y, inner=20)
    example = __import__("train_cnn")
    torch.manual_seed(0)
    cnn = example.MODEL()
    rows += _trace_overhead_rows("CNN training step", cnn, example.make_optimizer(cnn), torch.rand(64, 64), y, inner=5)
    return rows


def case_random():
    n = 16 * 2**20
    rows = []
    for name, fn in (("rand", torch.rand), ("randn", torch.randn)):
        native, rep = compare(lambda: fn(n), repeats=5)
        rows.append(_row(f"{name} of 16M float32 (Philox stream in repmode)", native, rep, n * 4 / 1e9, "GB/s"))
    return rows


def case_ddp_step(world: int = 2):
    """DDP over gloo in `world` processes (benchmarks/bench_ddp.py under torchrun, 1 thread each)."""
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={world}",
           os.path.join(here, "bench_ddp.py"), "--threads", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"bench_ddp.py failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    r = json.loads(lines[-1])
    mib = r["numel"] * 4 / 2**20
    rows = [_row(f"DDP training step, {world} ranks over gloo (CNN of examples/train_ddp.py, batch {r['batch']} "
                 "per rank, 1 thread per rank)", r["ddp_native_s"], r["ddp_repmode_s"]),
            _row(f"all_reduce (SUM) of {mib:.0f} MiB float32, {world} ranks over gloo", r["allreduce_native_s"],
                 r["allreduce_repmode_s"])]
    if r["bytes_native"] and r["bytes_repmode"]:
        rows.append((f"bytes sent per all_reduce of {mib:.0f} MiB, {world} ranks (loopback, all ranks together)",
                     f"{r['bytes_native'] / 2**20:.2f} MiB", f"{r['bytes_repmode'] / 2**20:.2f} MiB",
                     f"{r['bytes_repmode'] / r['bytes_native']:.2f}× volume"))
    rows.append(_row(f"FSDP2 training step, {world} ranks over gloo (MLP of examples/train_fsdp.py, fully_shard per "
                     f"Linear and root, batch {r['batch']} per rank)", r["fsdp_native_s"], r["fsdp_repmode_s"]))
    rows.append(("repmode: DDP vs repmode.TreeGradients step, same global batch 64 (micro-batches of 8), "
                 f"{world} ranks, MLP of train_mlp.py", f"{r['ddp_s'] * 1e3:.3f} ms", f"{r['tree_s'] * 1e3:.3f} ms",
                 f"{r['tree_s'] / r['ddp_s']:.2f}× time"))
    if r["ddp_bytes"] and r["tree_bytes"]:
        rows.append((f"bytes sent per step, DDP vs TreeGradients ({world} ranks, loopback, all ranks together)",
                     f"{r['ddp_bytes'] / 2**10:.1f} KiB", f"{r['tree_bytes'] / 2**10:.1f} KiB",
                     f"{r['tree_bytes'] / r['ddp_bytes']:.2f}× volume"))
    return rows


CASES = {
    "dispatch": case_dispatch_overhead,
    "mm256": lambda: case_mm(256),
    "mm1024": lambda: case_mm(1024),
    "mm2048": lambda: case_mm(2048),
    "mm_tall_skinny": case_tall_skinny,
    "bmm": case_bmm,
    "sum16M": lambda: case_sum(16 * 2**20),
    "sum64M": lambda: case_sum(64 * 2**20),
    "sum_dims": case_sum_dims,
    "var_mean": case_var_mean,
    "softmax": case_softmax,
    "sort_topk": case_sort_topk,
    "unary_math": case_unary_math,
    "activation_backward": case_activation_backward,
    "math_tail": case_math_tail,
    "math_special": case_math_special,
    "random": case_random,
    "scatter_add16M": case_scatter_add,
    "conv": case_conv,
    "upsample": case_upsample,
    "grid_sample": case_grid_sample,
    "mlp": case_mlp_step,
    "cnn": case_cnn_step,
    "transformer": case_transformer_step,
    "transformer_bf16": case_transformer_bf16_step,
    "lstm": case_lstm_step,
    "trace": case_trace,
    "ddp": case_ddp_step,
    "models": case_models,
    "fft": case_fft,
    "linalg": case_linalg,
}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{cpu}, {torch.get_num_threads()} threads, CPU ISA path {repmode.cpu_isa()}, "
            f"torch {torch.__version__}, Python {platform.python_version()}")


# The rows README.md shows (by case name prefix), between its benchmark markers.
README_ROWS = ("mm 1024", "sum 64M", "softmax", "exp of", "conv2d forward", "conv2d backward", "CNN training step (",
               "Transformer training step (", "Transformer training step under", "dispatch: repmode")
README_MARKERS = ("<!-- benchmarks:start -->", "<!-- benchmarks:end -->")


def update_readme(rows, stamp: str) -> None:
    """Refresh README.md's excerpt of the table (between README_MARKERS) from this run's rows."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    with open(path) as f:
        text = f.read()
    begin, end = README_MARKERS
    if begin not in text or end not in text:
        return
    picked = [r for prefix in README_ROWS for r in rows if r[0].startswith(prefix)]
    table = ("| case | native torch | repmode | repmode vs native |\n|---|---|---|---|\n"
             + "".join(f"| {' | '.join(r)} |\n" for r in picked))
    block = f"{begin}\n{stamp}\n\n{table}{end}"
    head, rest = text.split(begin, 1)
    with open(path, "w") as f:
        f.write(head + block + rest.split(end, 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--write", metavar="FILE", help="also write the table as Markdown to FILE")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    rows = []
    for name, case in CASES.items():
        if args.only and name not in args.only:
            continue
        for row in case():
            rows.append(row)
            print(" | ".join(row), flush=True)

    if args.write:
        header = ("| case | native torch | repmode | repmode vs native |\n"
                  "|---|---|---|---|\n")
        body = "".join(f"| {' | '.join(r)} |\n" for r in rows)
        with open(args.write, "w") as f:
            f.write("# Benchmarks\n\n")
            f.write("Generated by `python benchmarks/run.py --write BENCHMARKS.md` (or `make bench`).\n")
            f.write("Native torch and repmode are timed in the same run, best of several repeats.\n\n")
            f.write(f"Machine: {machine()}. Date: {datetime.date.today().isoformat()}.\n\n")
            f.write(header + body)
            # the GPU section (written by bench_cuda.py on a GPU machine), then the notes
            for part in ("GPU.md", "NOTES.md"):
                path = os.path.join(os.path.dirname(os.path.abspath(__file__)), part)
                if os.path.exists(path):
                    with open(path) as n:
                        f.write(n.read())
        if args.only is None:
            update_readme(rows, f"Excerpt of [BENCHMARKS.md](BENCHMARKS.md) ({machine()}, "
                                f"{datetime.date.today().isoformat()}):")


if __name__ == "__main__":
    main()
