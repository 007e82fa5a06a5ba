"""The direct depthwise kernel (groups = in = out channels; csrc/cpu/convolution_depthwise.cpp) computes
the documented orders of "Convolution" bit for bit: against the plain reference of every order, on every
ISA path, at 1, 2 and 3 threads, for channel counts around the lane widths (16 float32 / 8 float64
lanes, 8 float64 lanes for short float32 sums), output counts around the 4-position blocks, kernel
volumes and weight-gradient sums around the GEMM order's boundaries (chains of 16, the short float32
rule's 32 terms, one chunk of 256 positions, one group of 16,384 positions), special values,
transposed and strided/channels-last inputs."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode import _ext
from repmode.kernels.convolution import _Conv

aten = torch.ops.aten
C = _ext.C

# (x shape, kernel, stride, padding, dilation, bias, transposed, output_padding)
CASES = [
    ((2, 1, 5, 6), (3, 3), 1, 1, 1, True, False, 0),       # one channel
    ((3, 17, 7, 9), (3, 3), 1, 1, 1, False, False, 0),     # 16 + 1 lanes; 63 positions (4-blocks + 3)
    ((2, 33, 9, 8), (3, 3), 2, 1, 1, True, False, 0),      # stride 2, 8 + ... lanes in float64
    ((2, 24, 11, 10), (7, 7), 1, 3, 1, True, False, 0),    # ConvNeXt's 7×7
    ((2, 9, 12, 13), (5, 3), (2, 1), (2, 0), (1, 2), False, False, 0),  # asymmetric, dilated
    ((2, 16, 4, 4), (3, 3), 1, 4, 1, True, False, 0),      # padding wider than the kernel's reach
    ((2, 5, 21), (5,), 3, 2, 2, True, False, 0),           # 1-d
    ((2, 6, 4, 5, 6), (3, 2, 3), (1, 2, 1), 1, 1, True, False, 0),  # 3-d
    ((2, 19, 5, 6), (3, 3), 2, 1, 1, True, True, 1),       # transposed depthwise
    ((1, 40, 18, 17), (3, 3), 1, 1, 1, False, False, 0),   # 306 positions: two chunks per image
]

# Around the GEMM order's boundaries (csrc/common/matmul.h): forward sums of kvol terms (float32 kvol <= 32
# runs in float64; chains of 16 offsets), weight-gradient partials of L = positions terms (the same rule;
# chains of 16 positions). 18 channels: 16 + 2 float32 lanes, 2 × 8 + 2 float64 lanes.
BOUNDARY_CASES = [
    ((2, 18, 9, 10), (5, 5), 1, 2, 1, True, False, 0),     # kvol 25: two chains, short float32 sum
    ((2, 18, 8, 9), (4, 8), 1, (1, 3), 1, True, False, 0),  # kvol 32: the longest short float32 sum
    ((2, 18, 8, 12), (3, 11), 1, (1, 5), 1, True, False, 0),  # kvol 33: three chains in float32
    ((1, 18, 9, 9), (9, 9), 1, 4, 1, False, False, 0),     # kvol 81: six chains, the last one short
    ((1, 9, 17, 17), (16, 16), 1, 7, 1, True, False, 0),   # kvol 256: sixteen chains, one whole chunk
    ((2, 18, 1, 17), (1, 17), 1, (0, 8), 1, False, False, 0),  # kvol 17: a chain and one term
    ((3, 18, 4, 4), (3, 3), 1, 1, 1, True, False, 0),      # L 16: one chain of positions
    ((2, 18, 17), (3,), 1, 1, 1, False, False, 0),         # L 17: a chain and one position
    ((2, 18, 31), (5,), 1, 2, 1, True, False, 0),          # L 31
    ((2, 18, 4, 8), (3, 3), 1, 1, 1, False, False, 0),     # L 32: the longest short float32 partial
    ((2, 18, 3, 11), (3, 3), 1, 1, 1, True, False, 0),     # L 33: three chains in float32
    ((2, 9, 257), (5,), 1, 2, 1, False, False, 0),         # L 257: a chunk and one position
    ((2, 18, 4, 4), (3, 3), 2, 1, 1, True, True, 1),       # transposed: L 16 (its input), 9-term input gradient
    ((2, 18, 5, 5), (7, 7), 1, 3, 1, True, True, 0),       # transposed: L 25, 49-term input gradient
]


def _conv_args(case):
    xs, k, stride, padding, dilation, bias, transposed, op = case
    nd = len(k)

    def lst(v):
        return list(v) if isinstance(v, tuple) else [v] * nd
    return lst(stride), lst(padding), lst(dilation), transposed, lst(op), xs[1]


def _inputs(case, dtype, seed=0, special=False):
    xs, k, *_ = case
    g = torch.Generator().manual_seed(seed)
    ch = xs[1]
    x = torch.randn(xs, generator=g, dtype=dtype)
    w = torch.randn((ch, 1, *k), generator=g, dtype=dtype)
    b = torch.randn(ch, generator=g, dtype=dtype) if case[5] else None
    stride, padding, dilation, transposed, op, groups = _conv_args(case)
    y = aten.convolution(x, w, b, stride, padding, dilation, transposed, op, groups)
    gy = torch.randn(y.shape, generator=g, dtype=dtype)
    if special:
        tiny = torch.finfo(dtype).tiny / 8  # a subnormal
        for t, vals in ((x, [float("nan"), float("inf"), -0.0, tiny, -tiny]),
                        (w, [float("-inf"), -0.0, tiny]),
                        (gy, [float("nan"), float("-inf"), -0.0, tiny])):
            flat = t.view(-1)
            for i, v in enumerate(vals):
                flat[(7 * i + 3) % flat.numel()] = v
        x.view(-1)[-2:] = tiny * 3  # products that underflow to subnormals and zeros
        w.view(-1)[-2:] = 0.25
    return x, w, b, gy


def _repmode(case, x, w, b, gy):
    stride, padding, dilation, transposed, op, groups = _conv_args(case)
    with repmode.enabled():
        y = aten.convolution(x, w, b, stride, padding, dilation, transposed, op, groups)
        gx, gw, gb = aten.convolution_backward(gy, x, w, None if b is None else list(b.shape), stride, padding,
                                               dilation, transposed, op, groups, [True, True, False])
    return {"y": y, "gx": gx, "gw": gw}


def _reference(case, x, w, b, gy):
    """The plain loops of csrc/common/convolution.h (what = 0 forward, 1 input gradient, 2 weight gradient)."""
    stride, padding, dilation, transposed, op, groups = _conv_args(case)
    g = _Conv(None, (), {}, x, w, stride, padding, dilation, transposed, op, groups)
    x, w, gy = x.contiguous(), w.contiguous(), gy.contiguous()
    bp = 0 if b is None else b.contiguous().data_ptr()
    y, gx, gw = torch.empty(g.y_shape, dtype=x.dtype), torch.empty_like(x), torch.empty_like(w)
    if transposed:
        C.convolution_reference(1, g.code, g.geom, x.data_ptr(), w.data_ptr(), bp, y.data_ptr())
        C.convolution_reference(0, g.code, g.geom, gy.data_ptr(), w.data_ptr(), 0, gx.data_ptr())
        C.convolution_reference(2, g.code, g.geom, gy.data_ptr(), x.data_ptr(), 0, gw.data_ptr())
    else:
        C.convolution_reference(0, g.code, g.geom, x.data_ptr(), w.data_ptr(), bp, y.data_ptr())
        C.convolution_reference(1, g.code, g.geom, gy.data_ptr(), w.data_ptr(), 0, gx.data_ptr())
        C.convolution_reference(2, g.code, g.geom, x.data_ptr(), gy.data_ptr(), 0, gw.data_ptr())
    return {"y": y, "gx": gx, "gw": gw}


def _check(got, want, what):
    for k in want:
        assert_bitwise_equal(got[k], want[k], f"{k} {what}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES + BOUNDARY_CASES, ids=lambda c: f"{c[0]}k{c[1]}{'T' if c[6] else ''}")
def test_depthwise_equals_reference_on_every_isa_and_thread_count(case, dtype):
    x, w, b, gy = _inputs(case, dtype)
    want = _reference(case, x, w, b, gy)
    for isa in available_isas():
        for threads in (1, 2, 3):
            with cpu_isa(isa), num_threads(threads):
                _check(_repmode(case, x, w, b, gy), want, f"isa={isa} threads={threads}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[8], BOUNDARY_CASES[0], BOUNDARY_CASES[6],
                                  BOUNDARY_CASES[10]], ids=str)
def test_depthwise_special_values_follow_the_reference(case, dtype):
    x, w, b, gy = _inputs(case, dtype, seed=1, special=True)
    want = _reference(case, x, w, b, gy)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2):
            got = _repmode(case, x, w, b, gy)
        _check(got, want, f"isa={isa}")
    assert got["y"].isnan().any() and got["gw"].isnan().any()
    nan_bits = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000}[dtype]
    as_int = {torch.float32: torch.int32, torch.float64: torch.int64}[dtype]
    for k in ("y", "gx", "gw"):
        nan = got[k][got[k].isnan()]
        assert (nan.view(as_int) == nan_bits).all(), f"{k}: NaNs are canonical"


def test_depthwise_short_float32_sums_run_in_float64():
    """The short float32 rule, seen from outside: products of 2^100 overflow float32 but not float64, so a
    3×3 forward (9 terms) and a weight-gradient partial over 9 positions of 2^100·2^100 − 2^100·2^100 + 2^100
    give 2^100 exactly, where a float32 chain would give inf − inf = NaN."""
    big = 2.0 ** 100
    case = ((1, 3, 3, 3), (3, 3), 1, 0, 1, False, False, 0)  # one output position, 9 positions per offset
    x = torch.full((1, 3, 3, 3), big)
    w = torch.zeros(3, 1, 3, 3)
    w.view(3, 9)[:, :3] = torch.tensor([big, -big, 1.0])
    gy = torch.ones(1, 3, 1, 1)
    case_gw = ((1, 3, 5, 5), (3, 3), 1, 0, 1, False, False, 0)  # 3 × 3 = 9 output positions
    x_gw = torch.full((1, 3, 5, 5), big)
    gy_gw = torch.zeros(1, 3, 3, 3)
    gy_gw.view(3, 9)[:, :3] = torch.tensor([big, -big, 1.0])
    w_gw = torch.ones(3, 1, 3, 3)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(1):
            got = _repmode(case, x, w, None, gy)
            got_gw = _repmode(case_gw, x_gw, w_gw, None, gy_gw)
        assert (got["y"] == big).all(), f"y isa={isa}"
        assert (got_gw["gw"] == big).all(), f"gw isa={isa}"
    _check(got, _reference(case, x, w, None, gy), "forward case")
    _check(got_gw, _reference(case_gw, x_gw, w_gw, None, gy_gw), "weight-gradient case")


def test_depthwise_weight_gradient_past_one_group_of_chunks():
    """130 × 130 = 16,900 output positions: the weight gradient's sum crosses a group of 64 chunks."""
    case = ((2, 3, 130, 130), (3, 3), 1, 1, 1, False, False, 0)
    x, w, b, gy = _inputs(case, torch.float32, seed=2)
    want = _reference(case, x, w, b, gy)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2):
            _check(_repmode(case, x, w, b, gy), want, f"isa={isa}")


@pytest.mark.parametrize("case", [CASES[2], CASES[7]], ids=str)
def test_depthwise_ignores_memory_layout(case):
    x, w, b, gy = _inputs(case, torch.float32, seed=3)
    want = _reference(case, x, w, b, gy)

    def strided(t):
        big = torch.zeros([2 * s for s in t.shape], dtype=t.dtype)
        view = big[tuple(slice(None, None, 2) for _ in t.shape)]
        view.copy_(t)
        return view

    def chlast(t):
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}[t.dim()]
        return t.contiguous(memory_format=fmt)

    for name, f in (("strided", strided), ("channels_last", chlast)):
        with num_threads(2):
            _check(_repmode(case, f(x), f(w), b, f(gy)), want, name)


def test_depthwise_module_matches_reference_under_training():
    """nn.Conv2d(groups=channels) forward and backward in strict mode: the same bits as the reference."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(20, 20, 3, padding=1, groups=20, bias=True)
    x = torch.randn(3, 20, 9, 7, requires_grad=True)
    with repmode.enabled():
        y = conv(x)
        gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(5))
        y.backward(gy)
    case = ((3, 20, 9, 7), (3, 3), 1, 1, 1, True, False, 0)
    want = _reference(case, x.detach(), conv.weight.detach(), conv.bias.detach(), gy)
    assert_bitwise_equal(y, want["y"], "y")
    assert_bitwise_equal(x.grad, want["gx"], "gx")
    assert_bitwise_equal(conv.weight.grad, want["gw"], "gw")
