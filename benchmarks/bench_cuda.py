"""GPU benchmarks of repmode's CUDA backend: native torch and repmode timed in the same run.

    python benchmarks/bench_cuda.py                       # print the table
    python benchmarks/bench_cuda.py --write benchmarks/GPU.md   # the GPU section of BENCHMARKS.md

Cases (issue 9): mm 4096^3 float32 against torch.mm with TF32 off (also with A transposed, and a
weight gradient's long-k shape, with and without split k); sum of 256M floats (bandwidth);
softmax (16384, 4096); conv2d forward and backward (the forward also without the narrow tiles);
one training step of the CNN and of the Transformer of examples/. Each time is the best of
several repeats measured with CUDA events around the work (the GPU is synchronized before and
after). Exits 2 on a machine without a GPU or without repmode._C_cuda.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys

import torch

import repmode
from repmode import _ext

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))


def gpu_time(fn, repeats: int = 5, inner: int = 3) -> float:
    """Seconds per call on the GPU: the best of `repeats` event-timed runs of `inner` calls."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / inner)
    return best


def compare(fn, repeats: int = 5, inner: int = 3) -> tuple[float, float]:
    native = gpu_time(fn, repeats, inner)
    with repmode.enabled():
        rep = gpu_time(fn, repeats, inner)
    return native, rep


def _row(name, native, rep, work=None, unit=""):
    if work is None:
        return (name, f"{native * 1e3:.3f} ms", f"{rep * 1e3:.3f} ms", f"{native / rep:.2f}× native speed")
    return (name, f"{work / native:.1f} {unit}", f"{work / rep:.1f} {unit}", f"{native / rep:.2f}× native speed")


@contextlib.contextmanager
def env(name: str, value: str):
    """`name` set to `value` for the block (the kernels read their switches at each launch)."""
    os.environ[name] = value
    try:
        yield
    finally:
        del os.environ[name]


def case_mm():
    torch.backends.cuda.matmul.allow_tf32 = False  # native in true float32, as repmode
    a, b = torch.randn(4096, 4096, device="cuda"), torch.randn(4096, 4096, device="cuda")
    native, rep = compare(lambda: a @ b)
    rows = [_row("mm 4096³ float32 (native: TF32 off)", native, rep, 2 * 4096**3 / 1e12, "TFLOP/s")]
    # A transposed (as in a weight gradient): the kernel's strided, scalar-load path.
    native, rep = compare(lambda: a.t() @ b)
    rows.append(_row("mm 4096³ float32, A transposed", native, rep, 2 * 4096**3 / 1e12, "TFLOP/s"))
    # A weight gradient's shape, dW = dY^T X over 64 images of 56x56 positions: a 64 x 576 output
    # (2 x 5 tiles) and k = 200,704, which the kernel splits into slices of whole chunks.
    g, x = torch.randn(64 * 56 * 56, 64, device="cuda"), torch.randn(64 * 56 * 56, 576, device="cuda")
    native, rep = compare(lambda: g.t() @ x)
    rows.append(_row("mm (64 × 200,704) × (200,704 × 576), a weight gradient (long k)", native, rep,
                     2 * 64 * 576 * 64 * 56 * 56 / 1e12, "TFLOP/s"))
    # The same product with the split turned off (one block per output tile, the whole of k each):
    # what the split gains, timed in this run (same bits either way).
    with env("REPMODE_CUDA_SPLIT_K", "0"):
        native, rep = compare(lambda: g.t() @ x)
    rows.append(_row("the same weight gradient, split-k off (10 blocks)", native, rep,
                     2 * 64 * 576 * 64 * 56 * 56 / 1e12, "TFLOP/s"))
    return rows


def case_sum():
    x = torch.randn(256 * 2**20, device="cuda")
    native, rep = compare(lambda: x.sum())
    return [_row("sum of 256M float32 (bandwidth)", native, rep, x.numel() * 4 / 1e9, "GB/s")]


# The workloads of the softmax, conv and training-step cases, also run by profile_cuda.py.
def softmax_workload():
    x = torch.randn(16384, 4096, device="cuda")
    return lambda: torch.softmax(x, dim=1)


def conv_workloads():
    """(forward, forward + backward, GFLOP of the forward / 1e3) of the conv2d case."""
    x = torch.randn(32, 64, 56, 56, device="cuda", requires_grad=True)
    w = torch.randn(64, 64, 3, 3, device="cuda", requires_grad=True)
    torch.backends.cudnn.allow_tf32 = False
    fwd = lambda: torch.nn.functional.conv2d(x, w, padding=1)  # noqa: E731
    y = fwd().detach()
    g = torch.randn_like(y)
    bwd = lambda: torch.autograd.grad(fwd(), (x, w), g)  # noqa: E731
    return fwd, bwd, 2 * y.numel() * 64 * 9 / 1e12


def step_workload(module: str, clip=None, **model_args):
    """One training step of examples/<module>.py's model on a batch of 64."""
    example = __import__(module)
    torch.manual_seed(0)
    model = example.MODEL(**model_args).cuda()
    opt = example.make_optimizer(model)
    x, y = torch.rand(64, 64, device="cuda"), torch.randint(0, 10, (64,), device="cuda")

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()

    return step


STEPS = {  # name: (module, label, keyword arguments of step_workload)
    "cnn": ("train_cnn", "CNN training step (examples/train_cnn.py, batch 64)", {}),
    "transformer": ("train_transformer", "Transformer training step (d_model 128, 4 heads, 2 layers)",
                    dict(clip=1.0, d_model=128, heads=4, layers=2, patch=1)),
}


def case_softmax():
    native, rep = compare(softmax_workload())
    return [_row("softmax (16384, 4096), dim 1", native, rep)]


def case_conv():
    fwd, bwd, flops = conv_workloads()
    rows = [_row("conv2d forward (32,64,56,56)×(64,64,3,3)", *compare(fwd), flops, "TFLOP/s")]
    rows.append(_row("conv2d forward + backward (same)", *compare(bwd), 3 * flops, "TFLOP/s"))
    # The forward with 64-row products kept on the 128 x 128 tile (half of it idle): what the
    # narrow tiles gain, timed in this run (same bits either way).
    with env("REPMODE_CUDA_NARROW_TILES", "0"):
        rows.append(_row("conv2d forward, narrow tiles off (128 × 128 tiles)", *compare(fwd), flops, "TFLOP/s"))
    return rows


def _step(name: str):
    module, label, kwargs = STEPS[name]
    return [_row(label, *compare(step_workload(module, **kwargs), inner=2))]


CASES = {
    "mm": case_mm, "sum": case_sum, "softmax": case_softmax, "conv": case_conv,
    "cnn": lambda: _step("cnn"), "transformer": lambda: _step("transformer"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES))
    parser.add_argument("--write", metavar="FILE", help="also write the table as Markdown to FILE")
    args = parser.parse_args()
    if _ext.CUDA is None or not torch.cuda.is_available():
        print("bench_cuda: needs a GPU and repmode._C_cuda (docs/cuda.md)", file=sys.stderr)
        return 2
    rows = []
    for name, case in CASES.items():
        if args.only and name not in args.only:
            continue
        for row in case():
            rows.append(row)
            print(" | ".join(row), flush=True)
    if args.write:
        with open(args.write, "w") as f:
            f.write("\n## GPU (`python benchmarks/bench_cuda.py --write benchmarks/GPU.md`)\n\n")
            f.write(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
                    f"{datetime.date.today().isoformat()}. Native torch and repmode in the same run; "
                    "each time the best of several CUDA-event-timed repeats.\n\n")
            f.write("| case | native torch | repmode | repmode vs native |\n|---|---|---|---|\n")
            f.write("".join(f"| {' | '.join(r)} |\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
