"""float32 backward of triangular_solve and householder_product: repmode's error next to native's
(rule 6), over many random and ill-conditioned inputs, and where the error comes from.

Both backwards are torch's own formulas (C++ autograd) run through repmode's registered ops:
triangular_solve's is a triangular solve, one ``bmm`` over k = the right-hand sides' count,
``triu``/``tril``, ``neg`` and the ``add`` that sums the two outputs' gradients;
householder_product's is a loop over the reflectors of ``mm`` (k ≤ n), ``mul``, ``sub``, ``sum``,
``div`` with large intermediate values and much cancellation. So their float32 errors are made
of the roundings of float32 intermediates that torch's formula defines, native's and repmode's
alike; the forward kernels (float64 inside, one rounding) are already the most accurate possible.

For every input (fixed seeds) this measures, against the same op run natively in float64 on the
widened inputs (and the widened cotangent):

* ``rep`` / ``nat``: the largest absolute error of the float32 gradients, divided by the largest
  |float64 gradient| (a relative error), repmode's (strict mode) and native torch's;
* ``rep64mm``: repmode with its float32 ``mm``/``bmm`` replaced, in this measurement only, by a
  float64 product rounded once (the question "would a wider matrix product help?": matmul's
  order is a product-wide decision, not changed here);
* per ``mm``/``bmm`` call inside the backward (local error, the call's own float32 inputs): the
  error of repmode's product and of native's against the float64 product of the same inputs, in
  units of the output's largest float32 ulp; and per op of the backward (and forward), how often
  repmode's output is further from the op in float64 on the same operands than native's, and
  how often closer;
* that the gradients have the same bits at 1 and 2 threads.

Run: PYTHONPATH=. python benchmarks/accuracy_linalg_backward.py [--n 2 4 8 16 32 64] [--count 200]
Results recorded in docs/evidence.md ("Linear algebra: float32 backward of triangular_solve and
householder_product").
"""
from __future__ import annotations

import argparse
import statistics

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import repmode

aten = torch.ops.aten
MM = (aten.mm.default, aten.bmm.default)


class _Float64Products(TorchDispatchMode):
    """Inside repmode: float32 mm/bmm as the float64 product rounded once (a what-if, not repmode's)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in MM and args[0].dtype == torch.float32:
            return func(args[0].double(), args[1].double()).float()
        return func(*args, **kwargs)


def _widen(x):
    return x.detach().double() if isinstance(x, torch.Tensor) and x.dtype == torch.float32 else x


def _plain(x):
    return x.detach() if isinstance(x, torch.Tensor) else x


class _LocalProducts(TorchDispatchMode):
    """Inside repmode: each float32 mm/bmm's error (repmode's result and native's) against the
    float64 product of the same inputs, in ulps of the output's largest |value|; and for every
    functional op with one float32 output, its error and native's against the op in float64 on the
    same operands (relative to the largest |value|), per op."""

    def __init__(self):
        super().__init__()
        self.calls = []  # (k, repmode ulps, native ulps)
        self.ops = {}  # op name -> [calls, repmode worse, repmode better, sum of repmode's, of native's]

    def _per_op(self, func, args, kwargs, out):
        first = out[0] if isinstance(out, (tuple, list)) and out else out  # triangular_solve: the solution
        if not (isinstance(first, torch.Tensor) and first.dtype == torch.float32 and first.numel()):
            return
        if func._schema.is_mutable or not func._schema.returns or func._schema.returns[0].alias_info:
            return  # in-place ops and views: nothing computed
        with torch.utils._python_dispatch._disable_current_modes():
            try:
                ref = func(*[_widen(a) for a in args], **{k: _widen(v) for k, v in kwargs.items()})
                nat = func(*[_plain(a) for a in args], **{k: _plain(v) for k, v in kwargs.items()})
            except Exception:  # noqa: BLE001 - an op without a float64 form: not measured
                return
        if first is not out:
            ref, nat = ref[0], nat[0]
        out = first
        if not isinstance(ref, torch.Tensor) or ref.shape != out.shape:
            return
        scale = float(ref.abs().max())
        if not 0 < scale < float("inf"):
            return
        e_rep = float((out.detach().double() - ref).abs().max()) / scale
        e_nat = float((nat.double() - ref.double()).abs().max()) / scale
        s = self.ops.setdefault(str(func), [0, 0, 0, 0.0, 0.0])
        s[0] += 1
        s[1] += e_rep > e_nat
        s[2] += e_rep < e_nat
        s[3] += e_rep
        s[4] += e_nat

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self._per_op(func, args, kwargs, out)
        if func in MM and args[0].dtype == torch.float32 and out.numel():
            with torch.utils._python_dispatch._disable_current_modes():
                a, b = args[0].detach(), args[1].detach()
                ref = func(a.double(), b.double())
                nat = func(a, b)
                scale = float(ref.abs().max())
                if 0 < scale < float("inf"):
                    ulp = torch.finfo(torch.float32).eps * 2.0 ** (torch.tensor(scale).log2().floor().item())
                    self.calls.append((a.shape[-1], float((out.detach().double() - ref).abs().max()) / ulp,
                                       float((nat.double() - ref).abs().max()) / ulp))
        return out


def _fullrank(n, g, low=-9.0, high=9.0):
    """torch's OpInfo matrices: a random matrix's singular vectors with singular values in [2/3, 3/2]."""
    t = torch.empty(n, n, dtype=torch.float32).uniform_(low, high, generator=g)
    u, _, vh = torch.linalg.svd(t.double())
    s = torch.arange(2, n + 2, dtype=torch.float64)
    s[1::2] *= -1.0
    s = 1.0 + 1.0 / s
    return ((u * s) @ vh).float()


def triangular_solve_case(n, i, kind):
    g = torch.Generator().manual_seed(1000 * n + i)
    if kind == "opinfo":  # torch's samples: a full-rank matrix of which one triangle is read
        A = _fullrank(n, g)
    else:  # "random triangular": N(0,1) entries, exponentially ill-conditioned in n
        A = torch.randn(n, n, generator=g)
    B = torch.empty(n, 3, dtype=torch.float32).uniform_(-9, 9, generator=g)
    upper, transpose = bool(i % 2), bool((i // 2) % 2)

    def f(b, a):
        return torch.triangular_solve(b, a, upper=upper, transpose=transpose)
    return f, (B, A), g


def householder_case(n, i, kind):
    g = torch.Generator().manual_seed(2000 * n + i)
    m = n + (i % 2)
    k = max(n - 2, 1) if i % 3 == 0 else n
    if kind == "from geqrf":  # the reflectors of a QR (tau in [1, 2]): Q orthogonal, the real use
        a, tau = torch.geqrf(torch.randn(m, n, generator=g))
        return torch.linalg.householder_product, (a, tau[:k].contiguous()), g
    # torch's OpInfo samples: random reflectors and tau, a product far from orthogonal whose size
    # grows exponentially with n (above n = 8 the float32 results carry no correct digit)
    lo, hi = (-2.0, 2.0) if kind == "[-2, 2]" else (-9.0, 9.0)
    A = torch.empty(m, n, dtype=torch.float32).uniform_(-2, 2, generator=g)
    tau = torch.empty(k, dtype=torch.float32).uniform_(lo, hi, generator=g)
    return torch.linalg.householder_product, (A, tau), g


CASES = {"triangular_solve": (triangular_solve_case, ("opinfo", "random triangular")),
         "householder_product": (householder_case, ("from geqrf", "[-2, 2]", "tau in [-9, 9]"))}


def _grads(f, inputs, cot, mode=None, extra=None, threads=None):
    xs = [x.detach().clone().requires_grad_() for x in inputs]
    old = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        if mode == "repmode":
            with repmode.enabled():
                if extra is not None:
                    with extra:
                        out = f(*xs)
                        gs = torch.autograd.grad(out, xs, cot)
                else:
                    out = f(*xs)
                    gs = torch.autograd.grad(out, xs, cot)
        else:
            out = f(*xs)
            gs = torch.autograd.grad(out, xs, cot)
    finally:
        torch.set_num_threads(old)
    return [x.detach() for x in gs]


def measure(op, n, count, kind):
    make, _ = CASES[op]
    rows = []
    local = _LocalProducts()
    for i in range(count):
        f, inputs, g = make(n, i, kind)
        out = f(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        cot = [torch.randn(o.shape, generator=g) for o in outs]
        ref = _grads(f, [x.double() for x in inputs], [c.double() for c in cot])
        nat = _grads(f, inputs, cot)
        rep1 = _grads(f, inputs, cot, "repmode", threads=1)
        rep2 = _grads(f, inputs, cot, "repmode", threads=2)
        same = all(torch.equal(a.view(torch.int32), b.view(torch.int32)) for a, b in zip(rep1, rep2))
        what_if = _grads(f, inputs, cot, "repmode", _Float64Products())
        _grads(f, inputs, cot, "repmode", local)

        def err(gs):
            scale = max(float(r.abs().max()) for r in ref)
            if not scale or not all(torch.isfinite(r).all() for r in ref):
                return None
            return max(float((x.double() - r).abs().max()) for x, r in zip(gs, ref)) / scale
        e = (err(rep1), err(nat), err(what_if))  # None: no finite float64 reference (overflow)
        if None not in e and all(x == x and x < float("inf") for x in e):
            rows.append((*e, same))
    return rows, local


def summary(rows):
    if not rows:
        return "no input with a finite float64 reference"
    rep, nat, w = ([r[i] for r in rows] for i in range(3))
    worse = sum(a > b for a, b in zip(rep, nat))
    return (f"worst rep {max(rep):.2e} nat {max(nat):.2e} rep64mm {max(w):.2e} | median rep "
            f"{statistics.median(rep):.2e} nat {statistics.median(nat):.2e} rep64mm {statistics.median(w):.2e} "
            f"| rep > nat in {worse}/{len(rows)} | 1 vs 2 threads bitwise: {all(r[3] for r in rows)}")


def per_op_summary(ops):
    return "; ".join(f"{name.replace('aten.', '')} {c} calls: repmode worse {w}, better {b}, mean {r / c:.2e} vs "
                     f"{n / c:.2e}" for name, (c, w, b, r, n) in sorted(ops.items()) if w or b)


def local_summary(calls):
    if not calls:
        return "no float32 mm/bmm"
    rep = [c[1] for c in calls]
    nat = [c[2] for c in calls]
    ks = sorted({c[0] for c in calls})
    return (f"{len(calls)} mm/bmm calls (k in {ks[0]}..{ks[-1]}): largest error rep {max(rep):.2f} ulp, "
            f"nat {max(nat):.2f} ulp; mean rep {statistics.fmean(rep):.3f}, nat {statistics.fmean(nat):.3f}; "
            f"rep > nat in {sum(a > b for a, b in zip(rep, nat))}, nat > rep in {sum(b > a for a, b in zip(rep, nat))}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[2, 3, 4, 5, 8, 16, 32, 64])
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--op", choices=sorted(CASES), action="append")
    p.add_argument("--kind", action="append", help="only these input kinds (default: every kind)")
    args = p.parse_args()
    for op in args.op or sorted(CASES, reverse=True):
        for kind in CASES[op][1]:
            if args.kind and kind not in args.kind:
                continue
            for n in args.n:
                rows, local = measure(op, n, args.count, kind)
                print(f"{op} ({kind}) n={n} ({len(rows)} inputs): {summary(rows)}", flush=True)
                print(f"    local: {local_summary(local.calls)}", flush=True)
                print(f"    per op (relative to the largest |value|; the rest equal): {per_op_summary(local.ops)}",
                      flush=True)


if __name__ == "__main__":
    main()
