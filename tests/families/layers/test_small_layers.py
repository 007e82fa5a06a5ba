"""Activations and small layers, part 2: torch.norm's overloads, weight normalization, nn.Bilinear
(_trilinear), cdist (both compute modes), pdist, pairwise_distance and cosine_similarity in strict mode:
forward and backward close to float64 autograd of native torch (and no further than native float32),
the same bits at 1/2/3 threads, every ISA path and every layout, under grad / no_grad / inference_mode."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode

aten = torch.ops.aten


def _grads(f, *inputs):
    leaves = [t.detach().clone().requires_grad_() if t.is_floating_point() else t for t in inputs]
    out = f(*leaves)
    g = torch.linspace(-1.0, 1.5, out.numel(), dtype=out.dtype).view(out.shape)
    out.backward(g)
    return [out.detach()] + [t.grad for t in leaves if t.is_floating_point()]


def _bilinear(x1, x2, w, b):
    return F.bilinear(x1, x2, w, b)


# name -> (f, input shapes)
CASES = {
    "norm_p2_dim": (lambda x: torch.norm(x, 2, dim=1), [(7, 33)]),
    "norm_p3_keepdim": (lambda x: torch.norm(x, 3, dim=0, keepdim=True), [(7, 33)]),
    "norm_all": (lambda x: torch.norm(x), [(7, 33)]),
    "norm_fro_dims": (lambda x: torch.norm(x, dim=(0, 1)), [(7, 33)]),
    "weight_norm_dim0": (lambda v, g: torch._weight_norm(v, g, 0), [(6, 5, 3), (6, 1, 1)]),
    "weight_norm_last": (lambda v, g: torch._weight_norm(v, g, 2), [(6, 5, 3), (1, 1, 3)]),
    "bilinear": (_bilinear, [(9, 7), (9, 5), (4, 7, 5), (4,)]),
    "bilinear_batched": (lambda x1, x2, w: F.bilinear(x1, x2, w), [(2, 3, 7), (2, 3, 5), (4, 7, 5)]),
    "cdist_p2": (lambda a, b: torch.cdist(a, b), [(11, 6), (9, 6)]),
    "cdist_p2_mm": (lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), [(11, 6), (9, 6)]),
    "cdist_p2_large": (lambda a, b: torch.cdist(a, b), [(30, 6), (27, 6)]),
    "cdist_p1": (lambda a, b: torch.cdist(a, b, p=1.0), [(11, 6), (9, 6)]),
    "cdist_p0": (lambda a, b: torch.cdist(a, b, p=0.0), [(11, 6), (9, 6)]),
    "cdist_p05": (lambda a, b: torch.cdist(a, b, p=0.5), [(11, 6), (9, 6)]),
    "cdist_p15": (lambda a, b: torch.cdist(a, b, p=1.5), [(11, 6), (9, 6)]),
    "cdist_p3": (lambda a, b: torch.cdist(a, b, p=3.0), [(11, 6), (9, 6)]),
    "cdist_pinf": (lambda a, b: torch.cdist(a, b, p=float("inf")), [(11, 6), (9, 6)]),
    "cdist_batched": (lambda a, b: torch.cdist(a, b), [(2, 3, 11, 6), (3, 9, 6)]),
    "pdist_p2": (lambda x: F.pdist(x), [(13, 5)]),
    "pdist_p1": (lambda x: F.pdist(x, 1.0), [(13, 5)]),
    "pdist_p3": (lambda x: F.pdist(x, 3.0), [(13, 5)]),
    "pdist_pinf": (lambda x: F.pdist(x, float("inf")), [(13, 5)]),
    "pairwise_distance": (lambda a, b: F.pairwise_distance(a, b), [(11, 6), (11, 6)]),
    "pairwise_distance_p1": (lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True), [(11, 6), (11, 6)]),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b), [(11, 6), (11, 6)]),
    "cosine_similarity_dim0": (lambda a, b: F.cosine_similarity(a, b, dim=0), [(11, 6), (1, 6)]),
}


def _inputs(name, rng, dtype=torch.float64):
    return [torch.randn(s, generator=rng, dtype=torch.float64).to(dtype) for s in CASES[name][1]]


def _error(value, ref):
    return float((value.double() - ref).abs().max())


@pytest.mark.parametrize("name", list(CASES))
def test_close_to_float64_and_no_further_than_native(name, rng):
    f = CASES[name][0]
    inputs = _inputs(name, rng)
    ref = _grads(f, *inputs)
    native = _grads(f, *[t.float() for t in inputs])
    with repmode.enabled():
        ours = _grads(f, *[t.float() for t in inputs])
    assert len(ours) == len(ref)
    for k, (o, n, r) in enumerate(zip(ours, native, ref)):
        assert o.shape == r.shape and o.dtype == torch.float32
        scale = float(r.abs().max()) + 1e-30
        mine, theirs = _error(o, r), _error(n, r)
        # a few float32 roundings of the largest value, or no further than native torch
        assert mine <= max(2 * theirs, 8 * 2**-24 * scale), f"{name} output {k}: {mine} vs native {theirs}"


@pytest.mark.parametrize("name", ["norm_p2_dim", "weight_norm_dim0", "bilinear", "cdist_p2", "cdist_p3", "pdist_p2",
                                  "pairwise_distance"])
def test_float64_close_to_native(name, rng):
    f = CASES[name][0]
    inputs = _inputs(name, rng)
    ref = _grads(f, *inputs)
    with repmode.enabled():
        ours = _grads(f, *inputs)
    for o, r in zip(ours, ref):
        assert torch.allclose(o, r, rtol=1e-12, atol=1e-13)


def _everything(*inputs):
    out = {}
    for name, (f, shapes) in CASES.items():
        args = [inputs[k % len(inputs)][: s[-2] if len(s) > 1 else 1, : s[-1]] for k, s in enumerate(shapes)]
        args = [a.reshape(s) if a.numel() == torch.Size(s).numel() else
                torch.linspace(-1, 1, torch.Size(s).numel(), dtype=a.dtype).view(s) * a.flatten()[0] for a, s in
                zip(args, shapes)]
        for k, v in enumerate(_grads(f, *args)):
            out[f"{name}_{k}"] = v
    return out


def test_invariant_to_threads_isa_and_layout(rng):
    a = torch.randn(40, 40, generator=rng)
    b = torch.randn(40, 40, generator=rng)
    assert_invariant(_everything, a, b)


def test_weight_norm_interface_definition(rng):
    """n = RN(sqrt(Σ v·v)) in float64, w = RN(v · (g / n)) in float64, the norms' dtype float32 for bf16."""
    v = torch.randn(6, 5, 3, generator=rng)
    g = torch.randn(6, 1, 1, generator=rng)
    with repmode.enabled():
        w, n = aten._weight_norm_interface(v, g, 0)
        wb, nb = aten._weight_norm_interface(v.bfloat16(), g.bfloat16(), 0)
    v64 = v.double()
    n64 = v64.square().sum((1, 2), keepdim=True).sqrt()
    assert_bitwise_equal(n, n64.float())
    assert torch.equal(w, (v64 * (g.double() / n64)).float())
    assert wb.dtype == torch.bfloat16 and nb.dtype == torch.float32
    native_w, native_n = aten._weight_norm_interface(v, g, 0)
    assert torch.allclose(w, native_w, rtol=2e-7, atol=0) and torch.allclose(n, native_n, rtol=2e-7, atol=0)
    with repmode.enabled(), pytest.raises(RuntimeError, match="first or last dim"):
        aten._weight_norm_interface(v, torch.ones(1, 5, 1), 1)


@pytest.mark.parametrize("module", ["weight_norm", "parametrize"])
def test_weight_norm_module_trains_the_same_at_1_and_2_threads(module, rng):
    torch.manual_seed(0)
    base = torch.nn.Conv1d(4, 6, 3)
    x = torch.randn(3, 4, 10, generator=rng)
    results = []
    for threads in (1, 2):
        m = torch.nn.Conv1d(4, 6, 3)
        m.load_state_dict(base.state_dict())
        m = (torch.nn.utils.weight_norm(m) if module == "weight_norm"
             else torch.nn.utils.parametrizations.weight_norm(m))
        with num_threads(threads), repmode.enabled():
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(2):
                opt.zero_grad()
                m(x).square().mean().backward()
                opt.step()
            results.append(repmode.digest(m.state_dict()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["cdist_p2", "pdist_p2", "bilinear", "weight_norm_dim0", "pairwise_distance"])
def test_same_bits_under_no_grad_and_inference_mode(name, rng):
    f = CASES[name][0]
    inputs = [t.float() for t in _inputs(name, rng)]
    with repmode.enabled():
        want = _grads(f, *inputs)[0]
        with torch.no_grad():
            a = f(*inputs)
        with torch.inference_mode():
            b = f(*inputs)
    assert_bitwise_equal(want, a, "no_grad")
    assert_bitwise_equal(want, b, "inference_mode")


def test_cdist_rows_do_not_depend_on_the_other_rows(rng):
    a = torch.randn(20, 6, generator=rng)
    b = torch.randn(9, 6, generator=rng)
    with repmode.enabled():
        full = torch.cdist(a, b, p=3.0)
        part = torch.cdist(a[5:7], b, p=3.0)
        d = torch.pdist(a)
        d_first = torch.pdist(a[:2])
    assert_bitwise_equal(full[5:7], part)
    assert_bitwise_equal(d[:1], d_first)


def test_low_precision_inputs(rng):
    a = torch.randn(11, 6, generator=rng)
    b = torch.randn(11, 6, generator=rng)
    w = torch.randn(3, 6, 6, generator=rng)
    for dtype in (torch.bfloat16, torch.float16):
        with repmode.enabled():
            got = F.bilinear(a.to(dtype), b.to(dtype), w.to(dtype))
            d = F.pairwise_distance(a.to(dtype), b.to(dtype))
        ref = F.bilinear(a.to(dtype).double(), b.to(dtype).double(), w.to(dtype).double())
        assert got.dtype == dtype and d.dtype == dtype
        assert torch.allclose(got.double(), ref, rtol=2e-2, atol=2e-2)


def test_errors(rng):
    a = torch.randn(4, 6, generator=rng)
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="same number of columns"):
            torch.cdist(a, a[:, :5])
        with pytest.raises(RuntimeError, match="non-negative"):
            torch.cdist(a, a, p=-1.0)
        with pytest.raises(RuntimeError, match="2D"):
            torch.pdist(a[0])
