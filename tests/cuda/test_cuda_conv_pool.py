"""repmode._C_cuda's convolution and pooling launchers equal repmode._C's bit for bit: 1-d, 2-d and
3-d geometries with groups, stride, padding and dilation; a long weight-gradient sum (large N x
spatial) and enough images for several scratch rounds; every pooling kind, with and without
indices, in contiguous, channels-last and sliced layouts; NaN / inf inputs."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal
from support.cuda_helpers import CPU, GPU, finish, needs_cuda, random_input, stream

pytestmark = needs_cuda

CODE = {torch.float32: 0, torch.float64: 1}
DTYPES = [torch.float32, torch.float64]


def pad3(v, fill):
    v = list(v)
    return [fill] * (3 - len(v)) + v


# ----------------------------------------------------------------------------- convolution
# (N, Ci, Co, groups, input spatial, kernel, stride, padding, dilation)
CONV_CASES = [
    (2, 4, 6, 2, (17,), (5,), (3,), (2,), (2,)),                       # 1-d, groups
    (1, 3, 3, 3, (40,), (3,), (1,), (1,), (1,)),                        # 1-d depthwise
    (2, 3, 5, 1, (9, 11), (3, 3), (1, 1), (1, 1), (1, 1)),
    (3, 4, 6, 2, (10, 7), (3, 2), (2, 1), (1, 0), (1, 2)),             # asymmetric, dilation
    (2, 6, 6, 6, (13, 9), (3, 3), (2, 2), (1, 1), (1, 1)),             # depthwise, stride 2
    (1, 2, 3, 1, (5, 5), (3, 3), (1, 1), (3, 3), (1, 1)),              # padding wider than the reach
    (2, 3, 4, 1, (1, 1), (1, 1), (1, 1), (0, 0), (1, 1)),              # 1 x 1
    (2, 3, 4, 1, (8, 8), (8, 8), (1, 1), (0, 0), (1, 1)),              # kernel = image
    (2, 3, 4, 1, (5, 6, 7), (3, 2, 3), (1, 2, 1), (1, 1, 1), (1, 1, 1)),  # 3-d
    (2, 2, 4, 2, (6, 5, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 2, 1)),  # 3-d groups, dilation
    (0, 3, 4, 1, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1)),              # no images
    # at least 8 output channels per group and 8-term chains: the forward goes through the GEMM
    (2, 16, 32, 1, (9, 11), (3, 3), (1, 1), (1, 1), (1, 1)),
    (3, 16, 32, 2, (13,), (3,), (2,), (1,), (1,)),
    (1, 8, 16, 1, (4, 5, 6), (2, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2)),
    (2, 8, 129, 1, (3, 3), (3, 3), (1, 1), (0, 0), (1, 1)),            # a 1 x 1 output, 129 channels
]


def conv_geom(case):
    N, Ci, Co, G, ins, ks, ss, ps, ds = case
    i3, k3, s3, p3, d3 = pad3(ins, 1), pad3(ks, 1), pad3(ss, 1), pad3(ps, 0), pad3(ds, 1)
    o3 = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in zip(i3, k3, s3, p3, d3)]
    return [N, Ci, Co, G, *i3, *o3, *k3, *s3, *p3, *d3], i3, o3, k3


def conv_tensors(case, dtype, seed=0):
    N, Ci, Co, G = case[:4]
    geom, i3, o3, k3 = conv_geom(case)
    x = random_input((N, Ci, *i3), dtype, seed)
    w = random_input((Co, Ci // G, *k3), dtype, seed + 1)
    gy = random_input((N, Co, *o3), dtype, seed + 2)
    bias_co = random_input((Co,), dtype, seed + 3)
    bias_ci = random_input((Ci,), dtype, seed + 4)
    return geom, x, w, gy, bias_co, bias_ci


def both(fn_name, code, geom, ins, out_shape, dtype, bias=None):
    """The CPU and CUDA results of one launcher on the same inputs (ins: CPU tensors)."""
    res = []
    for dev in ("cpu", "cuda"):
        t = [a.to(dev) for a in ins]
        out = torch.full(out_shape, 9.0, dtype=dtype, device=dev)
        bt = bias.to(dev) if bias is not None else None  # kept alive until the launch has run
        b = bt.data_ptr() if bt is not None else 0
        ptrs = [a.data_ptr() for a in t]
        if fn_name == "conv_grad_weight":
            args = (code, geom, *ptrs, out.data_ptr())
        else:
            args = (code, geom, *ptrs, b, out.data_ptr())
        if dev == "cpu":
            getattr(CPU, fn_name)(*args, 2)
        else:
            getattr(GPU, fn_name)(*args, stream())
            finish()
        res.append(out.cpu())
    return res


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_forward_and_grad_input(case, dtype, with_bias):
    geom, x, w, gy, bco, bci = conv_tensors(case, dtype)
    code = CODE[dtype]
    cpu, gpu = both("conv_forward", code, geom, [x, w], gy.shape, dtype, bco if with_bias else None)
    assert_bitwise_equal(gpu, cpu, "conv_forward")
    cpu, gpu = both("conv_grad_input", code, geom, [gy, w], x.shape, dtype, bci if with_bias else None)
    assert_bitwise_equal(gpu, cpu, "conv_grad_input")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
def test_conv_grad_weight(case, dtype):
    geom, x, w, gy, _, _ = conv_tensors(case, dtype)
    cpu, gpu = both("conv_grad_weight", CODE[dtype], geom, [x, gy], w.shape, dtype)
    assert_bitwise_equal(gpu, cpu, "conv_grad_weight")


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_grad_weight_long_sums(dtype):
    """Few weights, long chains: 3 images of 300 x 300 positions (each partial a 90000-term chain)."""
    case = (3, 2, 3, 1, (300, 300), (3, 3), (1, 1), (1, 1), (1, 1))
    geom, x, w, gy, _, _ = conv_tensors(case, dtype, seed=4)
    cpu, gpu = both("conv_grad_weight", CODE[dtype], geom, [x, gy], w.shape, dtype)
    assert_bitwise_equal(gpu, cpu, "conv_grad_weight")


def test_conv_grad_weight_several_scratch_rounds():
    """More partials than one scratch round holds (2^24): 64 x 64 x 3 x 3 weights over 460 images
    (through the GEMM), 56 x 8 x 3 x 3 weights in groups of 7 output channels over 4200 images
    (the per-thread chains)."""
    for case in ((460, 64, 64, 1, (4, 4), (3, 3), (1, 1), (1, 1), (1, 1)),
                 (4200, 64, 56, 8, (4, 4), (3, 3), (1, 1), (1, 1), (1, 1))):
        geom, x, w, gy, _, _ = conv_tensors(case, torch.float32, seed=5)
        cpu, gpu = both("conv_grad_weight", 0, geom, [x, gy], w.shape, torch.float32)
        assert_bitwise_equal(gpu, cpu, "conv_grad_weight")


def test_conv_several_column_rounds():
    """26 images of 16 x 9 x 9216 lowered columns: more than one scratch round holds (2^25)."""
    case = (26, 16, 8, 1, (96, 96), (3, 3), (1, 1), (1, 1), (1, 1))
    geom, x, w, gy, bco, bci = conv_tensors(case, torch.float32, seed=6)
    cpu, gpu = both("conv_forward", 0, geom, [x, w], gy.shape, torch.float32, bco)
    assert_bitwise_equal(gpu, cpu, "conv_forward")
    cpu, gpu = both("conv_grad_input", 0, geom, [gy, w], x.shape, torch.float32, bci)
    assert_bitwise_equal(gpu, cpu, "conv_grad_input")
    cpu, gpu = both("conv_grad_weight", 0, geom, [x, gy], w.shape, torch.float32)
    assert_bitwise_equal(gpu, cpu, "conv_grad_weight")


def test_conv_channelless():
    """Ci = 0: the forward writes the bias alone, the weight gradient is empty."""
    case = (2, 0, 3, 1, (5,), (3,), (1,), (1,), (1,))
    geom, x, w, gy, bco, _ = conv_tensors(case, torch.float32)
    cpu, gpu = both("conv_forward", 0, geom, [x, w], gy.shape, torch.float32, bco)
    assert_bitwise_equal(gpu, cpu, "conv_forward")


# ----------------------------------------------------------------------------- pooling
MAX, AVG, ADAPTIVE_AVG, ADAPTIVE_MAX = 0, 1, 2, 3

# (kind, (N, C, D, H, W), kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor,
#  adaptive output size)
POOL_CASES = [
    (MAX, (2, 5, 1, 9, 8), (1, 2, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1), False, True, 0, None),
    (MAX, (2, 6, 1, 7, 9), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), False, True, 0, None),
    (MAX, (1, 6, 1, 8, 7), (1, 3, 2), (1, 2, 1), (0, 0, 0), (1, 1, 1), True, True, 0, None),
    (MAX, (2, 4, 1, 7, 7), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 2, 2), False, True, 0, None),
    (MAX, (2, 5, 4, 5, 6), (2, 2, 2), (1, 2, 2), (1, 0, 1), (1, 1, 1), False, True, 0, None),
    (MAX, (1, 4, 6, 7, 7), (3, 3, 3), (2, 2, 2), (0, 0, 0), (1, 2, 1), True, True, 0, None),
    (MAX, (1, 3, 1, 1, 33), (1, 1, 4), (1, 1, 3), (0, 0, 1), (1, 1, 1), True, True, 0, None),  # 1-d
    (AVG, (2, 5, 1, 9, 8), (1, 2, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1), False, True, 0, None),
    (AVG, (2, 6, 1, 7, 9), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), False, True, 0, None),
    (AVG, (2, 6, 1, 8, 7), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), True, False, 0, None),
    (AVG, (1, 4, 1, 8, 7), (1, 3, 2), (1, 2, 1), (0, 0, 0), (1, 1, 1), True, True, 5, None),
    (AVG, (2, 5, 4, 5, 6), (2, 2, 2), (1, 2, 2), (1, 0, 1), (1, 1, 1), False, True, 0, None),
    (AVG, (1, 4, 6, 7, 7), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), True, False, 0, None),
    (AVG, (1, 3, 1, 1, 33), (1, 1, 4), (1, 1, 3), (0, 0, 2), (1, 1, 1), True, False, 0, None),  # 1-d
    (ADAPTIVE_AVG, (2, 5, 1, 7, 9), None, None, None, None, False, True, 0, (1, 3, 4)),
    (ADAPTIVE_AVG, (2, 6, 1, 4, 11), None, None, None, None, False, True, 0, (1, 5, 5)),
    (ADAPTIVE_AVG, (1, 3, 1, 3, 5), None, None, None, None, False, True, 0, (1, 7, 12)),  # upsampling
    (ADAPTIVE_AVG, (2, 4, 5, 7, 3), None, None, None, None, False, True, 0, (2, 3, 2)),
    (ADAPTIVE_MAX, (2, 5, 1, 7, 9), None, None, None, None, False, True, 0, (1, 3, 4)),
    (ADAPTIVE_MAX, (1, 3, 1, 3, 5), None, None, None, None, False, True, 0, (1, 7, 12)),
    (ADAPTIVE_MAX, (2, 4, 5, 7, 3), None, None, None, None, False, True, 0, (2, 3, 2)),
]


def pool_out_size(I, k, s, p, d, ceil):
    o = (I + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= I + p:
        o -= 1
    return o


def pool_geom(case):
    kind, shape, k, s, p, d, ceil, cip, div, adaptive = case
    if adaptive is not None:
        return kind, shape, list(adaptive), [1, 1, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1], cip, div
    out = [pool_out_size(shape[2 + a], k[a], s[a], p[a], d[a], ceil) for a in range(3)]
    return kind, shape, out, list(k), list(s), list(p), list(d), cip, div


def in_layout(shape, layout, dtype, seed, device):
    """A tensor of `shape` (N, C, D, H, W) in a layout; the same values on every device."""
    N, C, D, H, W = shape
    if layout == "channels_last":
        base = random_input((N, D, H, W, C), dtype, seed)
        return base.to(device).permute(0, 4, 1, 2, 3)
    if layout == "sliced":
        base = random_input((N, C, D, H, 2 * W + 1), dtype, seed)
        return base.to(device)[..., 1::2]
    return random_input(shape, dtype, seed).to(device)


def out_tensor(shape, layout, dtype, device):
    N, C, D, H, W = shape
    if layout == "channels_last":
        return torch.full((N, D, H, W, C), 5.0, dtype=dtype, device=device).permute(0, 4, 1, 2, 3)
    return torch.full(shape, 5.0, dtype=dtype, device=device)


def pool_forward_on(dev, case, x, layout, with_index):
    kind, shape, out3, k, s, p, d, cip, div = pool_geom(case)
    oshape = (shape[0], shape[1], *out3)
    out = out_tensor(oshape, layout, x.dtype, dev)
    idx = torch.full(oshape, -7, dtype=torch.int64, device=dev) if with_index else None
    args = (CODE[x.dtype], kind, x.data_ptr(), out.data_ptr(), idx.data_ptr() if with_index else 0, list(shape),
            out3, k, s, p, d, cip, div, list(x.stride()), list(out.stride()),
            list(idx.stride()) if with_index else [0] * 5)
    if dev == "cpu":
        CPU.pool_forward(*args, 2, False)
    else:
        GPU.pool_forward(*args, stream(), False)
        finish()
    return out.cpu(), (idx.cpu() if with_index else None)


def pool_backward_on(dev, case, go, idx, layout):
    kind, shape, out3, k, s, p, d, cip, div = pool_geom(case)
    gi = out_tensor(tuple(shape), layout, go.dtype, dev)
    args = (CODE[go.dtype], kind, go.data_ptr(), idx.data_ptr() if idx is not None else 0, gi.data_ptr(),
            list(shape), out3, k, s, p, d, cip, div, list(gi.stride()), list(go.stride()),
            list(idx.stride()) if idx is not None else [0] * 5)
    if dev == "cpu":
        CPU.pool_backward(*args, 2, False)
    else:
        GPU.pool_backward(*args, stream(), False)
        finish()
    return gi.cpu()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "sliced"])
@pytest.mark.parametrize("case", POOL_CASES, ids=str)
def test_pool_forward_and_backward(case, layout, dtype):
    kind = case[0]
    mx = kind in (MAX, ADAPTIVE_MAX)
    for with_index in ([False, True] if mx else [False]):
        got = [pool_forward_on(dev, case, in_layout(case[1], layout, dtype, 1, dev), layout, with_index)
               for dev in ("cpu", "cuda")]
        assert_bitwise_equal(got[1][0], got[0][0], "pool_forward")
        if with_index:
            assert torch.equal(got[1][1], got[0][1]), "pool_forward index"
    _, shape, out3, *_ = pool_geom(case)
    oshape = (shape[0], shape[1], *out3)
    idx = pool_forward_on("cpu", case, in_layout(shape, layout, dtype, 1, "cpu"), layout, True)[1] if mx else None
    res = []
    for dev in ("cpu", "cuda"):
        go = in_layout(oshape, layout, dtype, 2, dev)
        res.append(pool_backward_on(dev, case, go, idx.to(dev) if mx else None, layout))
    assert_bitwise_equal(res[1], res[0], "pool_backward")


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool_ties_and_arbitrary_indices(dtype):
    """Ties and NaNs in the forward; a backward with indices anywhere in the plane (several outputs
    on one element, in increasing output order)."""
    case = POOL_CASES[1]
    _, shape, out3, *_ = pool_geom(case)
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-2, 3, shape, generator=g).to(dtype)
    x.view(-1)[::11] = float("nan")
    got = [pool_forward_on(dev, case, x.to(dev), "contiguous", True) for dev in ("cpu", "cuda")]
    assert_bitwise_equal(got[1][0], got[0][0], "pool_forward")
    assert torch.equal(got[1][1], got[0][1])
    oshape = (shape[0], shape[1], *out3)
    idx = torch.randint(0, shape[2] * shape[3] * shape[4], oshape, generator=g)
    go = random_input(oshape, dtype, 4)
    res = [pool_backward_on(dev, case, go.to(dev), idx.to(dev), "contiguous") for dev in ("cpu", "cuda")]
    assert_bitwise_equal(res[1], res[0], "pool_backward")


def test_pool_large_plane():
    """One big plane: a 2-d average and max pooling over 1 x 1 x 1000 x 1000."""
    for kind in (MAX, AVG):
        case = (kind, (1, 1, 1, 1000, 1000), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), False, True, 0, None)
        got = [pool_forward_on(dev, case, in_layout(case[1], "contiguous", torch.float32, 6, dev), "contiguous",
                               kind == MAX) for dev in ("cpu", "cuda")]
        assert_bitwise_equal(got[1][0], got[0][0], "pool_forward")


def test_pool_reference_is_cpu_only():
    x = torch.zeros(1, 1, 1, 2, 2, device="cuda")
    out = torch.zeros(1, 1, 1, 1, 1, device="cuda")
    with pytest.raises(ValueError):
        GPU.pool_forward(0, AVG, x.data_ptr(), out.data_ptr(), 0, [1, 1, 1, 2, 2], [1, 1, 1], [1, 2, 2],
                         [1, 2, 2], [0, 0, 0], [1, 1, 1], True, 0, list(x.stride()), list(out.stride()),
                         [0] * 5, stream(), True)
