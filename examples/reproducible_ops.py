"""repmode.ops: explicit reproducible functions, and where native torch differs.

    python examples/reproducible_ops.py

Runs each of repmode.ops on a fixed input and prints the digest of the result (the same on
every machine). With a GPU it runs them on CPU and CUDA and says whether each pair is bitwise
equal. Then it shows two native torch results that change with the thread count or the batch,
next to repmode's, which do not.
"""
from __future__ import annotations

import torch

import repmode
from repmode import ops


def fixed_inputs(device="cpu"):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 256, generator=g), torch.randn(256, 128, generator=g)
    img, kernel = torch.randn(8, 3, 16, 16, generator=g), torch.randn(4, 3, 3, 3, generator=g)
    target = torch.randint(0, 128, (64,), generator=g)
    return {k: v.to(device) for k, v in dict(a=a, b=b, img=img, kernel=kernel, target=target).items()}


CALLS = {
    "mm": lambda t: ops.mm(t["a"], t["b"]),
    "matmul": lambda t: ops.matmul(t["a"].view(4, 16, 256), t["b"]),
    "div": lambda t: ops.div(t["a"], 10),
    "sqrt": lambda t: ops.sqrt(t["a"].abs()),
    "exp": lambda t: ops.exp(t["a"]),
    "log": lambda t: ops.log(t["a"].abs()),
    "sum": lambda t: ops.sum(t["a"]),
    "mean": lambda t: ops.mean(t["a"], 1),
    "softmax": lambda t: ops.softmax(t["a"], 1),
    "log_softmax": lambda t: ops.log_softmax(t["a"], 1),
    "cross_entropy": lambda t: ops.cross_entropy(t["a"] @ t["b"], t["target"]),
    "conv2d": lambda t: ops.conv2d(t["img"], t["kernel"], padding=1),
}


def run_ops(device: str) -> dict[str, torch.Tensor]:
    inputs = fixed_inputs(device)
    return {name: call(inputs) for name, call in CALLS.items()}


def at_threads(n: int, fn):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        return fn()
    finally:
        torch.set_num_threads(before)


def same_bits(x: torch.Tensor, y: torch.Tensor) -> bool:
    return repmode.digest(x) == repmode.digest(y)


def main() -> None:
    cpu = run_ops("cpu")
    print("repmode.ops on the CPU (digests are the same on every machine):")
    for name, value in cpu.items():
        print(f"  {name:<14} {repmode.digest(value)}")

    if torch.cuda.is_available():
        print("CPU vs CUDA:")
        try:
            cuda = run_ops("cuda")
        except repmode.UnsupportedOpError as exc:
            print(f"  not available: {str(exc).splitlines()[0][:200]}")
        else:
            for name in CALLS:
                print(f"  {name:<14} {'bitwise equal' if same_bits(cpu[name], cuda[name]) else 'DIFFERENT'}")
    else:
        print("CPU vs CUDA: no GPU on this machine")

    print("Native torch vs repmode:")
    x = torch.randn(16 * 2**20, generator=torch.Generator().manual_seed(0))
    native = [at_threads(n, lambda: x.sum()) for n in (1, 2)]
    rep = [at_threads(n, lambda: ops.sum(x)) for n in (1, 2)]
    print(f"  sum of 16M floats, 1 vs 2 threads:  native {native[0].item():.9g} vs {native[1].item():.9g} "
          f"({'equal' if same_bits(*native) else 'different'}); repmode {rep[0].item():.9g} vs "
          f"{rep[1].item():.9g} ({'equal' if same_bits(*rep) else 'different'})")
    a, b = fixed_inputs()["a"], fixed_inputs()["b"]
    native_rows = same_bits((a @ b)[:1], a[:1] @ b)
    rep_rows = same_bits(ops.mm(a, b)[:1], ops.mm(a[:1], b))
    print(f"  row 0 of a 64-row mm vs the same row alone:  native {'equal' if native_rows else 'different'}; "
          f"repmode {'equal' if rep_rows else 'different'}")


if __name__ == "__main__":
    main()
