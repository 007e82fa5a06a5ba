"""The activations evaluated in double and rounded once (silu, gelu, gelu-tanh, elu, mish, softplus,
log_sigmoid, glu and their backward formulas: csrc/cpu/elementwise_activations.cpp) run the engine's AVX2
and AVX-512 copies of their loops, where the formulas' explicit fmas are FMA instructions instead of
libm calls: the same bits as the scalar path, for float32 and float64, on random bit patterns (NaN
payloads, infinities, subnormals, -0), contiguous, strided and broadcast operands, odd lengths, and at
1 and 2 threads."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode

aten = torch.ops.aten

# name -> fn(x, g): each formula of the activations group (g: an incoming gradient or a second operand)
OPS = {
    "silu": lambda x, g: aten.silu.default(x),
    "silu_backward": lambda x, g: aten.silu_backward.default(g, x),
    "gelu": lambda x, g: aten.gelu.default(x),
    "gelu_backward": lambda x, g: aten.gelu_backward.default(g, x),
    "gelu_tanh": lambda x, g: aten.gelu.default(x, approximate="tanh"),
    "gelu_tanh_backward": lambda x, g: aten.gelu_backward.default(g, x, approximate="tanh"),
    "elu": lambda x, g: aten.elu.default(x, 0.7, 1.3, 0.9),
    "elu_backward_input": lambda x, g: aten.elu_backward.default(g, 0.7, 1.3, 0.9, False, x),
    "elu_backward_result": lambda x, g: aten.elu_backward.default(g, 0.7, 1.3, 0.9, True, x.clamp(min=-0.7)),
    "mish": lambda x, g: aten.mish.default(x),
    "mish_backward": lambda x, g: aten.mish_backward.default(g, x),
    "softplus": lambda x, g: aten.softplus.default(x, 1.5, 10.0),
    "softplus_backward": lambda x, g: aten.softplus_backward.default(g, x, 1.5, 10.0),
    "log_sigmoid": lambda x, g: aten.log_sigmoid_forward.default(x)[0],
    "log_sigmoid_backward": lambda x, g: aten.log_sigmoid_backward.default(g, x, torch.empty(0, dtype=x.dtype)),
    "glu": lambda x, g: aten.glu.default(torch.stack([x, g], -1), -1),
}


def _values(dtype, n, seed):
    """Random bit patterns (every class of value), normal values at activation scales, and edges."""
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.float32:
        patterns = torch.randint(-2**31, 2**31, (n,), generator=gen, dtype=torch.int64).to(torch.int32)
    else:
        patterns = torch.randint(-2**62, 2**62, (n,), generator=gen, dtype=torch.int64) * 2
    info = torch.finfo(dtype)
    edges = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), info.tiny / 4, -info.tiny / 4,
                          info.tiny, 1.0, -1.0, 3.0, -3.0, 20.0, -20.0, 40.0, -40.0, 90.0, -90.0, 710.0, -745.0,
                          info.max, -info.max], dtype=dtype)
    normal = torch.randn(n, generator=gen, dtype=dtype) * 5
    return torch.cat([patterns.view(dtype), edges, normal, edges.flip(0)])


def _layouts(x, g):
    """(name, x, g) in contiguous, strided, broadcast (g a column) and odd-length forms."""
    n = x.numel() // 2 * 2
    yield "contiguous", x, g
    yield "odd", x[:1001], g[:1001]
    xs = torch.stack([x[:n], x[:n].flip(0)], 1)[:, 0]  # stride 2
    gs = torch.stack([g[:n], g[:n].flip(0)], 1)[:, 1]
    yield "strided", xs, gs
    rows = x[: (n // 31) * 31].view(-1, 31)
    yield "broadcast", rows, g[:31].view(1, 31).expand(rows.shape)
    yield "transposed", rows.t(), g[: rows.numel()].view(rows.shape).t()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(OPS))
def test_activation_loops_give_the_scalar_bits_on_every_isa(name, dtype):
    x = _values(dtype, 6000, seed=1)
    g = _values(dtype, 6000, seed=2).flip(0)
    fn = OPS[name]
    for layout, xl, gl in _layouts(x, g):
        with cpu_isa("scalar"), num_threads(1), repmode.enabled():
            want = fn(xl, gl)
        for isa in available_isas():
            for threads in (1, 2):
                with cpu_isa(isa), num_threads(threads), repmode.enabled():
                    got = fn(xl, gl)
                assert_bitwise_equal(got, want, f"{name} {dtype} {layout} isa={isa} threads={threads}")


def test_silu_of_a_large_tensor_is_thread_and_isa_invariant():
    """Past the engine's parallel threshold (32,768 elements), so the pieces split across threads."""
    x = torch.randn(70001, generator=torch.Generator().manual_seed(3)) * 8
    with cpu_isa("scalar"), num_threads(1), repmode.enabled():
        want = (aten.silu.default(x), aten.silu_backward.default(x.flip(0), x))
    for isa in available_isas():
        for threads in (2, 3):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                got = (aten.silu.default(x), aten.silu_backward.default(x.flip(0), x))
            assert_bitwise_equal(got, want, f"isa={isa} threads={threads}")
