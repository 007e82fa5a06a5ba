"""Candidate canonical orders for the sums over k of matrix products, next to native torch, on the
shapes where numerics version 6's order was less accurate than native: matrix-vector products
(k = 10 ... 1,000), small convolution weight gradients (k = 1,320 and 125), and the mm shapes of
docs/accuracy.md. Version 7's order (docs/semantics.md "Matrix products") is the column "v7".

    python benchmarks/accuracy_orders.py [--redraws N]

Each candidate is emulated in numpy on the exact terms the op sums: a float32 fma is the exact
product in double plus the addend, rounded once to float32 (a double rounding can differ from a
true fma in rare ties: irrelevant to the means printed). For each case: the mean over redraws of the
largest absolute error against the exact sum (double, pairwise over at most 1,320 exact products:
far below float32's error), for native torch and each candidate, and the ratio candidate / native.
Used to choose the next product order (issues 24, 25, 33); docs/accuracy.md records a run.
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
import torch.nn.functional as F

f32, f64 = np.float32, np.float64


def _fma(a, b, c):
    return (a.astype(f64) * b.astype(f64) + c.astype(f64)).astype(f32)


def _chain(A, B, lo=0, hi=None):
    acc = np.zeros(A.shape[0], f32)
    for k in range(lo, A.shape[1] if hi is None else hi):
        acc = _fma(A[:, k], B[:, k], acc)
    return acc


def _in_order(parts):
    total = parts[0]
    for p in parts[1:]:
        total = (total + p).astype(f32)
    return total


def chunked(A, B, chunk=256, group=64):
    """fma chains over chunks of ``chunk`` k from +0, partials summed in order per group of ``group``
    chunks, group sums in order (chunk 256 is numerics version 6's order)."""
    K = A.shape[1]
    parts = [_chain(A, B, q, min(q + chunk, K)) for q in range(0, K, chunk)] or [np.zeros(A.shape[0], f32)]
    return _in_order([_in_order(parts[g:g + group]) for g in range(0, len(parts), group)])


def lanes(A, B, L=8, chunk=256):
    """per chunk of 256: L interleaved fma chains (k mod L) from +0, combined by a pairwise tree;
    chunk partials summed in order."""
    K = A.shape[1]
    partials = []
    for q in range(0, K, chunk):
        acc = [np.zeros(A.shape[0], f32) for _ in range(L)]
        for k in range(q, min(q + chunk, K)):
            acc[(k - q) % L] = _fma(A[:, k], B[:, k], acc[(k - q) % L])
        while len(acc) > 1:
            acc = [(acc[2 * i] + acc[2 * i + 1]).astype(f32) for i in range(len(acc) // 2)]
        partials.append(acc[0])
    return _in_order(partials)


def levels(A, B, sizes=(16, 16, 64)):
    """fma chains over ``sizes[0]`` k from +0; each further level sums ``sizes[i]`` consecutive
    partials of the level below in order; the last level's partials summed in order."""
    K = A.shape[1]
    parts = [_chain(A, B, q, min(q + sizes[0], K)) for q in range(0, K, sizes[0])] or [np.zeros(A.shape[0], f32)]
    for size in sizes[1:]:
        parts = [_in_order(parts[g:g + size]) for g in range(0, len(parts), size)]
    return _in_order(parts)


def double_short(A, B, limit=16, longer=chunked):
    """k <= limit: the exact products summed in double, rounded once; longer sums: ``longer``."""
    if A.shape[1] <= limit:
        return (A.astype(f64) * B.astype(f64)).sum(1).astype(f32)
    return longer(A, B)


CANDIDATES = {
    "v6: chains of 256": chunked,
    "chains of 64": lambda A, B: chunked(A, B, 64),
    "chains of 32": lambda A, B: chunked(A, B, 32),
    "k <= 16 in double": double_short,
    "k <= 16 in double, else chains of 32": lambda A, B: double_short(A, B, 16, lambda a, b: chunked(a, b, 32)),
    "8 lanes + pairwise per 256": lanes,
    "16 lanes + pairwise per 256": lambda A, B: lanes(A, B, 16),
    "v7: chains of 16 per chunk, k <= 32 in double": lambda A, B: double_short(A, B, 32, levels),
}


def mv_case_k(k):
    def case():
        A = torch.rand(250, k) * 18 - 9
        x = torch.rand(k) * 18 - 9
        return A.numpy(), np.broadcast_to(x.numpy(), (250, k)), torch.mv(A, x).numpy()
    return case


def conv_transpose3d_weight_grad_case():
    """OpInfo conv_transpose3d sample 8: input (1, 4, 5, 5, 5), weight (4, 8, 3, 3, 3): each weight
    element's gradient sums over the 125 input positions."""
    x = torch.rand(1, 4, 5, 5, 5) * 18 - 9
    w = (torch.rand(4, 8, 3, 3, 3) * 18 - 9).requires_grad_()
    gy = torch.randn(1, 8, 7, 7, 7)
    gw = torch.autograd.grad(F.conv_transpose3d(x, w), w, gy)[0]
    cols = gy[0].unfold(1, 5, 1).unfold(2, 5, 1).unfold(3, 5, 1).reshape(8 * 27, 125).numpy()
    A = np.repeat(x[0].reshape(4, 125).numpy(), 8 * 27, axis=0)   # rows (ci, co, f), k = position
    return A.astype(f32), np.tile(cols, (4, 1)).astype(f32), gw.reshape(-1).numpy()


def mm_case(k, positive):
    def case():
        draw = torch.rand if positive else torch.randn
        a, b = draw(8, k), draw(k, 8)
        return np.repeat(a.numpy(), 8, axis=0), np.tile(b.numpy().T, (8, 1)), (a @ b).numpy().reshape(-1)
    return case


def conv3d_weight_grad_case():
    """OpInfo conv3d sample 9: input (1, 10, 11, 12) unbatched, weight (1, 1, 1, 2, 5), padding 'same'."""
    x = torch.rand(1, 1, 10, 11, 12) * 18 - 9
    w = (torch.rand(1, 1, 1, 2, 5) * 18 - 9).requires_grad_()
    go = torch.randn(1, 1, 10, 11, 12)
    gw = torch.autograd.grad(F.conv3d(x, w, padding="same"), w, go)[0]
    xp = F.pad(x, (2, 2, 0, 1, 0, 0))[0, 0].numpy()        # 'same' for (1, 2, 5): left (0, 0, 2), right (0, 1, 2)
    A = np.stack([xp[:, i:i + 11, j:j + 12].reshape(-1) for i in range(2) for j in range(5)]).astype(f32)
    return A, np.broadcast_to(go[0, 0].numpy().reshape(-1), A.shape), gw.reshape(-1).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redraws", type=int, default=40)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cases = {"mv 250x10 (matmul OpInfo sample 12)": mv_case_k(10)}
    for k in (40, 100, 256, 1000):
        cases[f"mv 250x{k}"] = mv_case_k(k)
    cases["conv3d weight gradient, k = 1,320 (OpInfo sample 9)"] = conv3d_weight_grad_case
    cases["conv_transpose3d weight gradient, k = 125 (OpInfo sample 8)"] = conv_transpose3d_weight_grad_case
    for k in (16, 64, 256, 1024):
        cases[f"mm 8x{k}x8 randn"] = mm_case(k, False)
    for k in (256, 4096):
        cases[f"mm 8x{k}x8 rand"] = mm_case(k, True)
    print("| case | native | " + " | ".join(CANDIDATES) + " |")
    print("|---|---|" + "---|" * len(CANDIDATES))
    for name, case in cases.items():
        native, errors = 0.0, dict.fromkeys(CANDIDATES, 0.0)
        for _ in range(args.redraws):
            A, B, nat = case()
            exact = (A.astype(f64) * B.astype(f64)).sum(1)
            native += np.abs(nat.astype(f64) - exact).max()
            for c, order in CANDIDATES.items():
                errors[c] += np.abs(order(A, B).astype(f64) - exact).max()
        cells = " | ".join(f"{e / args.redraws:.3g} ({e / native:.2f}x)" for e in errors.values())
        print(f"| {name} | {native / args.redraws:.3g} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
