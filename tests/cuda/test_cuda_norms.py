"""CUDA == CPU, bit for bit: layer norm, batch norm (both layouts), group norm and the LSTM cell
steps (csrc/cuda/layer_norm.cu, csrc/cuda/batch_norm.cu, csrc/cuda/recurrent.cu). Shapes hit the edges of the GPU
partition: sums
over 0, 1, 31, 32, 33, 4095, 4096, 4097 and 4096*300+7 terms (chunks of 4096, lanes of 32, a second
level of chunk values), column tiles of 32 +- 1 (channels-last batch norm, layer norm's weight and
bias gradients), empty tensors, strided LSTM rows; float32 and float64 with special values."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal
from support.cuda_helpers import CPU, GPU, finish, needs_cuda, on_gpu, random_input, stream

pytestmark = needs_cuda

CODE = {torch.float32: 0, torch.float64: 1}
DTYPES = [torch.float32, torch.float64]
BIG = 4096 * 300 + 7


def _p(t):
    return 0 if t is None else t.data_ptr()


def _both(run, *inputs):
    """run(lib, last, *inputs) on the CPU (2 threads) and on the GPU (the current stream), each on
    its own copy of the inputs (some are updated in place); returns both results and both inputs."""
    cpu_in = [None if t is None else t.clone() for t in inputs]
    gpu_in = [None if t is None else on_gpu(t) for t in inputs]
    cpu_out = run(CPU, 2, *cpu_in)
    gpu_out = run(GPU, stream(), *gpu_in)
    finish()
    return cpu_out, [t.cpu() for t in gpu_out], cpu_in, [None if t is None else t.cpu() for t in gpu_in]


def _check(cpu_out, gpu_out, names):
    for name, a, b in zip(names, cpu_out, gpu_out):
        assert_bitwise_equal(b, a, name)


def _empty(n, like):
    return torch.empty(n, dtype=like.dtype, device=like.device)


# ---------------------------------------------------------------- layer norm

def _ln_forward(lib, last, x, w, b, M, N, eps=1e-5):
    y, mean, rstd = _empty(M * N, x), _empty(M, x), _empty(M, x)
    lib.layer_norm_forward(CODE[x.dtype], _p(x), M, N, _p(w), _p(b), eps, _p(y), _p(mean), _p(rstd), last, False)
    return y, mean, rstd


def _ln_backward(lib, last, g, x, mean, rstd, w, M, N, want=(True, True, True), reference=False):
    dx, dw, db = (_empty(n, x) if on else None for n, on in zip((M * N, N, N), want))
    lib.layer_norm_backward(CODE[x.dtype], _p(g), _p(x), _p(mean), _p(rstd), _p(w), M, N, _p(dx), _p(dw), _p(db),
                            last, reference)
    return [t for t in (dx, dw, db) if t is not None]


LN_SHAPES = [(0, 5), (5, 0), (1, 1), (1, 31), (3, 32), (2, 33), (7, 4095), (2, 4096), (3, 4097), (1, BIG),
             (4095, 3), (4097, 31), (4096 + 1, 33), (2 * 4096 + 5, 65), (BIG, 2), (300, 257)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", LN_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(M, N, dtype, affine):
    x = random_input((M * N,), dtype, seed=M * 7 + N)
    w = random_input((N,), dtype, seed=1) if affine else None
    b = random_input((N,), dtype, seed=2) if affine else None
    cpu, gpu, _, _ = _both(lambda lib, last, x, w, b: _ln_forward(lib, last, x, w, b, M, N), x, w, b)
    _check(cpu, gpu, ("y", "mean", "rstd"))
    if M == 0:
        return
    g = random_input((M * N,), dtype, seed=3)
    # the backward from the CPU's statistics (the same inputs on both devices)
    mean, rstd = cpu[1], cpu[2]
    run = lambda lib, last, g, x, m, r, w: _ln_backward(lib, last, g, x, m, r, w, M, N)  # noqa: E731
    cpu_b, gpu_b, _, _ = _both(run, g, x, mean, rstd, w)
    _check(cpu_b, gpu_b, ("dx", "dw", "db"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("want", [(True, False, False), (False, True, False), (False, False, True),
                                  (False, True, True)])
def test_layer_norm_backward_partial(dtype, want):
    M, N = 4097, 33
    x, g = random_input((M * N,), dtype, seed=4), random_input((M * N,), dtype, seed=5)
    mean, rstd = random_input((M,), dtype, seed=6, specials=False), random_input((M,), dtype, seed=7)
    w = random_input((N,), dtype, seed=8)
    run = lambda lib, last, g, x, m, r, w: _ln_backward(lib, last, g, x, m, r, w, M, N, want)  # noqa: E731
    cpu, gpu, _, _ = _both(run, g, x, mean, rstd, w)
    _check(cpu, gpu, [n for n, on in zip(("dx", "dw", "db"), want) if on])


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_backward_no_rows(dtype):
    """M = 0: the weight and bias gradients are sums over no rows, +0.0 (the CPU reference's value)."""
    N = 37
    x = _empty(0, torch.empty(0, dtype=dtype))
    w = random_input((N,), dtype, seed=9)
    cpu = _ln_backward(CPU, 1, x, x, x, x, w, 0, N, reference=True)
    gx = on_gpu(x)
    gpu = _ln_backward(GPU, stream(), gx, gx, gx, gx, on_gpu(w), 0, N)
    finish()
    _check(cpu, [t.cpu() for t in gpu], ("dx", "dw", "db"))


def test_layer_norm_reference_flag_is_refused():
    x = torch.zeros(4, device="cuda")
    with pytest.raises(ValueError):
        GPU.layer_norm_forward(0, _p(x), 2, 2, 0, 0, 1e-5, _p(x), _p(x), _p(x), stream(), True)
    with pytest.raises(ValueError):
        GPU.layer_norm_backward(0, _p(x), _p(x), _p(x), _p(x), 0, 2, 2, _p(x), 0, 0, stream(), True)


# ---------------------------------------------------------------- batch norm

def _bn_forward(lib, last, x, w, b, rm, rv, N, C, S, cl, training, momentum=0.1, eps=1e-5):
    y = _empty(N * C * S, x)
    sm, si = (_empty(C, x), _empty(C, x)) if training else (None, None)
    lib.batch_norm_forward(CODE[x.dtype], _p(x), _p(y), N, C, S, cl, _p(w), _p(b), _p(rm), _p(rv), training,
                           momentum, eps, _p(sm), _p(si), last)
    return [t for t in (y, sm, si) if t is not None]


def _bn_backward(lib, last, dy, x, w, mean, invstd, rm, rv, N, C, S, cl, train, want, eps=1e-5):
    dx, dw, db = (_empty(n, x) if on else None for n, on in zip((N * C * S, C, C), want))
    lib.batch_norm_backward(CODE[x.dtype], _p(dy), _p(x), N, C, S, cl, _p(w), _p(mean), _p(invstd), _p(rm), _p(rv),
                            train, eps, _p(dx), _p(dw), _p(db), last)
    return [t for t in (dx, dw, db) if t is not None]


# (N, C, S): N*S (the terms per channel) at 0, 1, 31, 32, 33, 4095, 4096, 4097, large; C around
# the 32-channel tiles of the channels-last engine.
BN_SHAPES = [(0, 3, 5), (2, 3, 0), (1, 1, 1), (1, 2, 31), (2, 3, 16), (3, 2, 11), (4095, 1, 1), (2, 5, 2048),
             (1, 3, 4097), (4097, 31, 1), (5, 32, 819), (3, 33, 1366), (2, 65, 17), (BIG, 2, 1), (1, 3, BIG),
             (7, 9, 4096 * 3 + 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,C,S", BN_SHAPES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_training(N, C, S, channels_last, dtype):
    x = random_input((N * C * S,), dtype, seed=N + 3 * C + 5 * S)
    w, b = random_input((C,), dtype, seed=1), random_input((C,), dtype, seed=2)
    rm, rv = random_input((C,), dtype, seed=3), random_input((C,), dtype, seed=4).abs()
    run = lambda lib, last, x, w, b, rm, rv: _bn_forward(lib, last, x, w, b, rm, rv, N, C, S,  # noqa: E731
                                                         channels_last, True)
    cpu, gpu, cpu_in, gpu_in = _both(run, x, w, b, rm, rv)
    _check(cpu, gpu, ("y", "save_mean", "save_invstd"))
    _check(cpu_in[3:], gpu_in[3:], ("running_mean", "running_var"))
    # backward with the batch statistics
    dy = random_input((N * C * S,), dtype, seed=7)
    mean, invstd = cpu[1], cpu[2]
    run = lambda lib, last, dy, x, w, m, i: _bn_backward(lib, last, dy, x, w, m, i, None, None, N, C, S,  # noqa
                                                         channels_last, True, (True, True, True))
    cpu_b, gpu_b, _, _ = _both(run, dy, x, w, mean, invstd)
    _check(cpu_b, gpu_b, ("dx", "dw", "db"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,C,S", [(1, 1, 1), (2, 3, 31), (4097, 33, 1), (3, 5, 4097), (BIG, 2, 1)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_eval(N, C, S, channels_last, dtype):
    x = random_input((N * C * S,), dtype, seed=11)
    w, b = random_input((C,), dtype, seed=12), random_input((C,), dtype, seed=13)
    rm, rv = random_input((C,), dtype, seed=14), random_input((C,), dtype, seed=15).abs()
    run = lambda lib, last, x, w, b, rm, rv: _bn_forward(lib, last, x, w, b, rm, rv, N, C, S,  # noqa: E731
                                                         channels_last, False)
    cpu, gpu, _, _ = _both(run, x, w, b, rm, rv)
    _check(cpu, gpu, ("y",))
    dy = random_input((N * C * S,), dtype, seed=16)
    for want in [(True, True, True), (True, False, False), (False, True, True)]:
        run = lambda lib, last, dy, x, w, rm, rv: _bn_backward(lib, last, dy, x, w, None, None, rm, rv,  # noqa
                                                               N, C, S, channels_last, False, want)
        cpu_b, gpu_b, _, _ = _both(run, dy, x, w, rm, rv)
        _check(cpu_b, gpu_b, [n for n, on in zip(("dx", "dw", "db"), want) if on])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_without_parameters(channels_last, dtype):
    """No weight, bias or running statistics; a training backward wanting dx alone."""
    N, C, S = 5, 33, 130
    x = random_input((N * C * S,), dtype, seed=21)
    run = lambda lib, last, x: _bn_forward(lib, last, x, None, None, None, None, N, C, S,  # noqa: E731
                                           channels_last, True, momentum=0.3)
    cpu, gpu, _, _ = _both(run, x)
    _check(cpu, gpu, ("y", "save_mean", "save_invstd"))
    dy = random_input((N * C * S,), dtype, seed=22)
    run = lambda lib, last, dy, x, m, i: _bn_backward(lib, last, dy, x, None, m, i, None, None, N, C, S,  # noqa
                                                      channels_last, True, (True, False, False))
    cpu_b, gpu_b, _, _ = _both(run, dy, x, cpu[1], cpu[2])
    _check(cpu_b, gpu_b, ("dx",))


# ---------------------------------------------------------------- group norm

def _gn_forward(lib, last, x, w, b, N, C, HxW, G, eps=1e-5):
    y, mean, rstd = _empty(N * C * HxW, x), _empty(N * G, x), _empty(N * G, x)
    lib.group_norm_forward(CODE[x.dtype], _p(x), _p(y), N, C, HxW, G, _p(w), _p(b), eps, _p(mean), _p(rstd), last)
    return y, mean, rstd


def _gn_backward(lib, last, dy, x, mean, rstd, w, N, C, HxW, G, want=(True, True, True)):
    dx, dw, db = (_empty(n, x) if on else None for n, on in zip((N * C * HxW, C, C), want))
    lib.group_norm_backward(CODE[x.dtype], _p(dy), _p(x), _p(mean), _p(rstd), _p(w), N, C, HxW, G, _p(dx), _p(dw),
                            _p(db), last)
    return [t for t in (dx, dw, db) if t is not None]


# (N, C, HxW, G): group sizes Cg*HxW and channel sums N*HxW across the chunk edges.
GN_SHAPES = [(0, 4, 5, 2), (2, 6, 0, 3), (1, 1, 1, 1), (2, 6, 31, 3), (3, 4, 16, 2), (1, 3, 11, 1),
             (1, 4, 1024, 1), (2, 3, 4095, 3), (2, 6, 4097, 3), (4097, 2, 1, 1), (3, 64, 17, 32),
             (1, 2, BIG, 1), (5, 8, 4096 * 2 + 3, 4)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,C,HxW,G", GN_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(N, C, HxW, G, dtype, affine):
    x = random_input((N * C * HxW,), dtype, seed=N + C + HxW + G)
    w = random_input((C,), dtype, seed=1) if affine else None
    b = random_input((C,), dtype, seed=2) if affine else None
    run = lambda lib, last, x, w, b: _gn_forward(lib, last, x, w, b, N, C, HxW, G)  # noqa: E731
    cpu, gpu, _, _ = _both(run, x, w, b)
    _check(cpu, gpu, ("y", "mean", "rstd"))
    dy = random_input((N * C * HxW,), dtype, seed=3)
    for want in [(True, True, True), (True, False, False), (False, False, True)]:
        run = lambda lib, last, dy, x, m, r, w: _gn_backward(lib, last, dy, x, m, r, w, N, C, HxW, G,  # noqa
                                                             want)
        cpu_b, gpu_b, _, _ = _both(run, dy, x, cpu[1], cpu[2], w)
        _check(cpu_b, gpu_b, [n for n, on in zip(("dx", "dw", "db"), want) if on])


# ---------------------------------------------------------------- LSTM cell steps

def _lstm_forward(lib, last, a, r, c, B, H, a_rs, r_rs, c_rs):
    ws, h = _empty(B * 6 * H, a), _empty(B * H, a)
    lib.lstm_forward_step(CODE[a.dtype], B, H, _p(a), a_rs, _p(r), r_rs, _p(c), c_rs, _p(ws), _p(h), last)
    return ws, h


def _lstm_backward(lib, last, go, dh, dc, ws, c, B, H, go_rs, go_cs, c_rs):
    dgates, dc_out = _empty(B * 4 * H, ws), _empty(B * H, ws)
    lib.lstm_backward_step(CODE[ws.dtype], B, H, _p(go), go_rs, go_cs, _p(dh), _p(dc), _p(ws), _p(c), c_rs,
                           _p(dgates), _p(dc_out), last)
    return dgates, dc_out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("B,H", [(0, 4), (3, 0), (1, 1), (3, 31), (5, 32), (2, 33), (17, 257), (301, 1000)])
@pytest.mark.parametrize("strided", [False, True])
def test_lstm_steps(B, H, dtype, strided):
    pad = 5 if strided else 0
    a_rs, r_rs, c_rs = 4 * H + pad, 4 * H + 2 * pad, H + pad
    # pre-activations scaled so the gates are not all saturated; specials mixed in
    a = random_input((B * a_rs,), dtype, seed=B + H) * 3
    r = random_input((B * r_rs,), dtype, seed=B + H + 1)
    c = random_input((B * c_rs,), dtype, seed=B + H + 2)
    run = lambda lib, last, a, r, c: _lstm_forward(lib, last, a, r, c, B, H, a_rs, r_rs, c_rs)  # noqa: E731
    cpu, gpu, _, _ = _both(run, a, r, c)
    _check(cpu, gpu, ("ws", "h"))
    ws = cpu[0]
    # grad_output read transposed (row stride 1, column stride B) when strided, else rows of H + pad
    go_rs, go_cs = (1, B) if strided else (H, 1)
    go = random_input((B * H,), dtype, seed=7)
    dh, dc = random_input((B * H,), dtype, seed=8), random_input((B * H,), dtype, seed=9)
    for use in [(True, True, True), (True, False, False), (False, True, False), (False, False, True),
                (False, False, False)]:
        ins = [t if on else None for t, on in zip((go, dh, dc), use)]
        run = lambda lib, last, go, dh, dc, ws, c: _lstm_backward(lib, last, go, dh, dc, ws, c, B, H,  # noqa
                                                                  go_rs, go_cs, c_rs)
        cpu_b, gpu_b, _, _ = _both(run, *ins, ws, c)
        _check(cpu_b, gpu_b, ("dgates", "dc_out"))
