"""Grid sampling (grid_sampler_2d/3d: bilinear, nearest, bicubic; zeros, border, reflection;
align_corners both ways; forward, grad_input and grad_grid) and affine_grid: the fast walks equal
the plain reference loops bit for bit, results do not depend on threads, ISA path, layout or
batch composition, every forward (and the backward where torch's is unique) equals native torch
bit for bit, values and
gradients are as close to float64 as native torch's, bf16/fp16 are the float32 result rounded
once, and a spatial transformer trains in strict mode with the same digests at 1 and 2 threads."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from support import THREAD_COUNTS, OpRecorder, assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode.kernels import grid_sample

aten = torch.ops.aten


@contextlib.contextmanager
def reference_loops():
    grid_sample.USE_REFERENCE = True
    try:
        yield
    finally:
        grid_sample.USE_REFERENCE = False


def sliced(x):
    """The same values stored with gaps in every dimension."""
    big = torch.zeros([2 * s + 1 for s in x.shape], dtype=x.dtype)
    view = big[tuple(slice(1, None, 2) for _ in x.shape)]
    view.copy_(x)
    return view


def channels_last(x):
    return x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)


# (mode, padding, align_corners, input shape, grid spatial shape)
CASES = [(m, p, ac, (2, 3, 5, 7), (4, 6)) for m in ("bilinear", "nearest", "bicubic")
         for p in ("zeros", "border", "reflection") for ac in (False, True)]
CASES += [(m, p, ac, (2, 3, 3, 4, 5), (2, 3, 4)) for m in ("bilinear", "nearest")
          for p in ("zeros", "border", "reflection") for ac in (False, True)]
IDS = [f"{len(s) - 2}d-{m}-{p}-{'ac' if ac else 'noac'}" for m, p, ac, s, _ in CASES]


def _inputs(shape, gshape, dtype=torch.float64, seed=0, span=1.6):
    """Input, a grid reaching outside [-1, 1] (span) with some exact pixel centres and half-pixel
    ties in it, and a grad_output."""
    torch.manual_seed(seed)
    x = torch.randn(shape, dtype=dtype)
    nsp = len(shape) - 2
    grid = (torch.rand((shape[0],) + tuple(gshape) + (nsp,), dtype=dtype) * 2 - 1) * span
    flat = grid.view(-1)
    flat[::7] = torch.tensor([-1.0, 1.0, 0.0, 0.5, -0.25], dtype=dtype).repeat(flat[::7].numel() // 5 + 1)[
        :flat[::7].numel()]
    g = torch.randn((shape[0], shape[1]) + tuple(gshape), dtype=dtype)
    return x, grid, g


def _run(case, x, grid, g, grads=(True, True)):
    """Forward and backward of F.grid_sample under repmode (strict): (out, grad x, grad grid)."""
    mode, padding, ac = case[:3]
    x = x.detach().requires_grad_(grads[0])
    grid = grid.detach().requires_grad_(grads[1])
    with repmode.enabled():
        y = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=ac)
        y.backward(g)
    return y.detach(), x.grad, grid.grad


def _native(case, x, grid, g):
    mode, padding, ac = case[:3]
    x = x.detach().requires_grad_(True)
    grid = grid.detach().requires_grad_(True)
    y = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=ac)
    y.backward(g)
    return y.detach(), x.grad, grid.grad


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_walks_equal_the_reference_loops_on_every_layout(case, dtype):
    x, grid, g = _inputs(case[3], case[4], dtype)
    with reference_loops():
        want = _run(case, x, grid, g)
    for name, lay_x, lay_g in (("contiguous", lambda t: t, lambda t: t), ("channels_last", channels_last, sliced),
                               ("sliced", sliced, lambda t: t.transpose(1, 2).contiguous().transpose(1, 2))):
        got = _run(case, lay_x(x), lay_g(grid), lay_x(g))
        for a, b, what in zip(got, want, ("forward", "grad_input", "grad_grid")):
            assert_bitwise_equal(a.contiguous(), b.contiguous(), f"{what} {name}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_same_bits_at_every_thread_count_isa_and_batch_composition(case):
    shape = (5,) + case[3][1:]
    x, grid, g = _inputs(shape, case[4], torch.float32, seed=1)
    with num_threads(1):
        want = _run(case, x, grid, g)
    for threads in THREAD_COUNTS[1:]:
        with num_threads(threads):
            assert_bitwise_equal(_run(case, x, grid, g), want, f"threads={threads}")
    for isa in available_isas():
        with cpu_isa(isa):
            assert_bitwise_equal(_run(case, x, grid, g), want, f"isa={isa}")
    for i in (0, 3):  # batch entry i alone gives row i of the batched result
        one = _run(case, x[i:i + 1], grid[i:i + 1], g[i:i + 1])
        for a, b, what in zip(one, want, ("forward", "grad_input", "grad_grid")):
            assert_bitwise_equal(a[0], b[i], f"{what} of batch entry {i}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_forwards_and_the_unique_native_backwards_equal_native_torch_bit_for_bit(case, dtype):
    # Every forward and grid gradient follows torch's CPU arithmetic (the bicubic grid gradient
    # as torch computes it when the input needs a gradient too, as here); so does the whole 3-d
    # backward (torch's sequential loop) and every nearest backward (one tap per position).
    # torch's vectorized 2-d grad_input adds a vector of positions corner by corner, which is not
    # unique across vector widths: not compared.
    if case[:2] == ("bicubic", "reflection") and dtype == torch.float32 and torch.__version__ < "2.13":
        # torch 2.11's float32 bicubic reflection rounds differently from 2.13's (seen on the GPU
        # machine's torch 2.11: repmode gave the same bits there as here, native did not; 2.12 not
        # tried). repmode follows 2.13; its accuracy against float64 is checked below on any torch.
        pytest.skip("native float32 bicubic reflection changed its rounding in torch 2.12/2.13")
    x, grid, g = _inputs(case[3], case[4], dtype, seed=2)
    got, nat = _run(case, x, grid, g), _native(case, x, grid, g)
    assert_bitwise_equal(got[0], nat[0], "forward")
    if case[0] == "nearest" or len(case[3]) == 5:
        assert_bitwise_equal(got[1], nat[1], "grad_input")
    assert_bitwise_equal(got[2], nat[2], "grad_grid")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_are_as_close_to_float64_as_native_torch(case):
    x64, grid64, g64 = _inputs(case[3], case[4], torch.float64, seed=3, span=1.2)
    ref = _native(case, x64, grid64, g64)
    x, grid, g = x64.float(), grid64.float(), g64.float()
    mine, nat = _run(case, x, grid, g), _native(case, x, grid, g)
    eps = torch.finfo(torch.float32).eps
    for what, m, n, r in zip(("forward", "grad_input", "grad_grid"), mine, nat, ref):
        scale = max(r.abs().max().item(), 1.0)
        err_m = (m.double() - r).abs().max().item()
        err_n = (n.double() - r).abs().max().item()
        assert err_m <= err_n + 4 * eps * scale, f"{what}: repmode error {err_m:.3g}, native {err_n:.3g}"


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_only_the_requested_gradients_are_computed_and_they_match(mode):
    case = (mode, "zeros", False, (2, 3, 5, 7), (4, 6))
    x, grid, g = _inputs(case[3], case[4], torch.float32, seed=4)
    both = _run(case, x, grid, g)
    only_x = _run(case, x, grid, g, grads=(True, False))
    only_grid = _run(case, x, grid, g, grads=(False, True))
    assert_bitwise_equal(only_x[1], both[1], "grad_input alone")
    assert_bitwise_equal(only_grid[2], both[2], "grad_grid alone")


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grad_no_grad_and_inference_mode_give_the_same_forward_bits(mode):
    x, grid, _ = _inputs((2, 3, 5, 7), (4, 6), torch.float32, seed=5)
    results = []
    for ctx in (contextlib.nullcontext, torch.no_grad, torch.inference_mode):
        with ctx(), repmode.enabled():
            results.append(F.grid_sample(x, grid, mode=mode, align_corners=False))
    assert_bitwise_equal(results[1], results[0], "no_grad")
    assert_bitwise_equal(results[2], results[0], "inference_mode")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_low_precision_is_the_float32_result_rounded_once(dtype, mode):
    case = (mode, "border", True, (2, 3, 5, 7), (4, 6))
    x, grid, g = _inputs(case[3], case[4], torch.float32, seed=6)
    x, grid, g = x.to(dtype), grid.to(dtype), g.to(dtype)
    low = _run(case, x, grid, g)
    wide = _run(case, x.float(), grid.float(), g.float())
    for a, b, what in zip(low, wide, ("forward", "grad_input", "grad_grid")):
        assert a.dtype == dtype
        assert_bitwise_equal(a, b.to(dtype), what)


def test_the_cpu_fallback_ops_are_the_same_kernels():
    case = ("bicubic", "reflection", False, (2, 3, 5, 7), (4, 6))
    x, grid, g = _inputs(case[3], case[4], torch.float32, seed=7)
    with OpRecorder() as probe:
        aten._grid_sampler_2d_cpu_fallback_backward(g, x, grid, 2, 2, False)
    if "aten._grid_sampler_2d_cpu_fallback_backward.default" not in probe.seen:
        # torch 2.11 runs this private op as a composite below every dispatch mode (its loop is
        # native C++; the mode sees only its zeros_like): docs/semantics.md "Grid sampling"
        pytest.skip("this torch runs _grid_sampler_2d_cpu_fallback_backward beneath dispatch modes")
    with repmode.enabled():
        out = aten.grid_sampler_2d(x, grid, 2, 2, False)
        fb = aten._grid_sampler_2d_cpu_fallback(x, grid, 2, 2, False)
        gi, gg = aten.grid_sampler_2d_backward(g, x, grid, 2, 2, False, [True, True])
        fgi, fgg = aten._grid_sampler_2d_cpu_fallback_backward(g, x, grid, 2, 2, False)
    assert_bitwise_equal((fb, fgi, fgg), (out, gi, gg), "fallback forms")


def test_nan_grid_values_give_the_canonical_nan_or_torchs_zero():
    x = torch.randn(1, 2, 4, 4)
    grid = torch.zeros(1, 1, 2, 2)
    grid[0, 0, 0, 0] = float("nan")
    with repmode.enabled():
        bil = F.grid_sample(x, grid, mode="bilinear", align_corners=False)
        near = F.grid_sample(x, grid, mode="nearest", align_corners=False)
    assert bil[0, :, 0, 0].isnan().all()
    assert (bil[0, :, 0, 0].view(torch.int32) == 0x7FC00000).all()
    assert_bitwise_equal(near, F.grid_sample(x, grid, mode="nearest", align_corners=False), "nearest: NaN -> outside")


def test_grid_sampling_refuses_complex_inputs_and_states_torchs_errors():
    x = torch.randn(1, 2, 4, 4, dtype=torch.complex64)
    with pytest.raises(repmode.UnsupportedOpError, match="grid_sampler_2d"):
        with repmode.enabled():
            aten.grid_sampler_2d(x, torch.zeros(1, 2, 2, 2, dtype=torch.complex64), 0, 0, False)
    with pytest.raises(RuntimeError, match="bicubic"):
        with repmode.enabled():
            aten.grid_sampler_3d(torch.randn(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 1, 3), 2, 0, False)


# ---- affine_grid ----

@pytest.mark.parametrize("size", [(3, 2, 5, 7), (2, 1, 3, 4, 5), (2, 1, 1, 6)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_its_gradient_are_close_to_float64_and_thread_invariant(size, align_corners):
    torch.manual_seed(8)
    nsp = len(size) - 2
    theta64 = torch.randn(size[0], nsp, nsp + 1, dtype=torch.float64)
    g64 = torch.randn((size[0],) + tuple(size[2:]) + (nsp,), dtype=torch.float64)
    t = theta64.clone().requires_grad_(True)
    ref = F.affine_grid(t, list(size), align_corners=align_corners)
    ref.backward(g64)
    runs = []
    for threads in THREAD_COUNTS:
        th = theta64.float().requires_grad_(True)
        with num_threads(threads), repmode.enabled():
            out = F.affine_grid(th, list(size), align_corners=align_corners)
            out.backward(g64.float())
        runs.append((out.detach(), th.grad))
    for r in runs[1:]:
        assert_bitwise_equal(r, runs[0], "threads")
    eps = torch.finfo(torch.float32).eps
    assert (runs[0][0].double() - ref.detach()).abs().max() <= 8 * eps * max(ref.abs().max().item(), 1)
    assert (runs[0][1].double() - t.grad).abs().max() <= 64 * eps * max(t.grad.abs().max().item(), 1)


def test_affine_grid_of_the_identity_is_the_pixel_grid_exactly():
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    with repmode.enabled():
        got = F.affine_grid(theta, [1, 1, 4, 5], align_corners=True)
    assert_bitwise_equal(got[0, 0, :, 0], torch.tensor([-1.0, -0.5, 0.0, 0.5, 1.0]), "x")
    assert_bitwise_equal(got[0, :, 0, 1], torch.tensor([-1.0, -1 / 3, 1 / 3, 1.0]), "y")


# ---- a spatial transformer, trained ----

class SpatialTransformer(nn.Module):
    """A localization net predicts theta; affine_grid + grid_sample warp the input; a classifier
    reads the warped image (bicubic for the warp of the features, bilinear for the input)."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                                 nn.Linear(16, 6))
        nn.init.normal_(self.loc[-1].weight, std=0.05)
        with torch.no_grad():
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.head = nn.Linear(3 * 12 * 12, 5)

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, [x.shape[0], 1, 12, 12], align_corners=False)
        warped = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        f = F.relu(self.conv(warped))
        f = F.grid_sample(f, grid, mode="bicubic", padding_mode="reflection", align_corners=False)
        return self.head(f.flatten(1))


def _train_stn(threads):
    torch.manual_seed(9)
    model = SpatialTransformer()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(6, 1, 12, 12)
    target = torch.randint(0, 5, (6,))
    with num_threads(threads), repmode.enabled():
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), target)
            loss.backward()
            opt.step()
    return repmode.digest(model.state_dict()), repmode.digest(loss.detach())


def test_a_spatial_transformer_trains_in_strict_mode_with_the_same_digests_at_1_and_2_threads():
    assert _train_stn(1) == _train_stn(2)
