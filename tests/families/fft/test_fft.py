"""FFT (`_fft_c2c`, `_fft_r2c`, `_fft_c2r` and the complex forms the FFT path needs): twiddles are
the correctly rounded cos/sin, transforms are at least as accurate as native torch (oneMKL or pocketfft)
against a float64 DFT (float32) or an mpmath DFT (float64) for power-of-two, smooth, prime and
large-prime lengths, the bits do not depend on threads, layout or batch composition, every
`torch.fft` function runs in strict mode with its backward, and a spectrogram front-end trains
with the same bits at 1 and 2 threads."""
from __future__ import annotations

import math

import mpmath
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode
from repmode import _ext

SIZES = [1, 2, 3, 8, 12, 16, 17, 30, 101, 360, 1009, 1024, 2018]


def _complex(shape, dtype=torch.complex128, seed=0):
    g = torch.Generator().manual_seed(seed)
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    return torch.complex(torch.randn(shape, generator=g, dtype=real), torch.randn(shape, generator=g, dtype=real))


@pytest.mark.parametrize("n", [8, 12, 17, 360, 1009, 4096])
def test_twiddles_are_the_correctly_rounded_cos_and_sin(n):
    mpmath.mp.prec = 200
    ks = range(n) if n <= 400 else list(range(0, n, max(1, n // 300))) + [n - 1, n // 2, n // 4, n // 8]
    for k in ks:
        re, im = _ext.C.fft_twiddle_of(k, n)
        turns = mpmath.mpf(2 * k) / n  # cospi/sinpi: exact zeros at the exact quarter turns
        assert re == float(mpmath.cospi(turns)), (k, n)
        assert im == -float(mpmath.sinpi(turns)), (k, n)


def _mp_dft(x: torch.Tensor, inverse=False) -> list:
    """The DFT of a 1-d complex128 tensor in 120-bit arithmetic."""
    mpmath.mp.prec = 120
    n = x.numel()
    xs = [mpmath.mpc(float(v.real), float(v.imag)) for v in x]
    sign = 1 if inverse else -1
    w = [mpmath.exp(sign * 2j * mpmath.pi * k / n) for k in range(n)]
    return [mpmath.fsum(xs[j] * w[(j * k) % n] for j in range(n)) for k in range(n)]


def _max_err(got: torch.Tensor, want: list) -> float:
    return max(float(abs(mpmath.mpc(float(g.real), float(g.imag)) - w)) for g, w in zip(got, want))


@pytest.mark.parametrize("n", [8, 12, 16, 17, 30, 64, 101])
def test_float64_transforms_are_as_accurate_as_native_against_mpmath(n):
    x = _complex(n, seed=n)
    want = _mp_dft(x)
    native = torch.fft.fft(x)
    with repmode.enabled():
        got = torch.fft.fft(x)
    scale = max(float(abs(w)) for w in want)
    err, err_native = _max_err(got, want) / scale, _max_err(native, want) / scale
    assert err <= max(2 * err_native, 4 * 2.0 ** -53), (err, err_native)


@pytest.mark.parametrize("n", [16, 17, 101, 360, 1009, 1024])
def test_float32_transforms_are_at_least_as_accurate_as_native_against_a_float64_dft(n):
    x = _complex((4, n), torch.complex64, seed=n)
    want = torch.fft.fft(x.to(torch.complex128))
    native = torch.fft.fft(x)
    with repmode.enabled():
        got = torch.fft.fft(x)
    assert got.dtype == torch.complex64
    err = (got.to(torch.complex128) - want).abs().max().item()
    err_native = (native.to(torch.complex128) - want).abs().max().item()
    assert err <= err_native, (err, err_native)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_every_length_and_norm_is_close_to_native_forward_and_inverse(n, norm):
    x = _complex((3, n), seed=n)
    with repmode.enabled():
        f = torch.fft.fft(x, norm=norm)
        b = torch.fft.ifft(x, norm=norm)
    torch.testing.assert_close(f, torch.fft.fft(x, norm=norm), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(b, torch.fft.ifft(x, norm=norm), rtol=1e-12, atol=1e-12)


def test_a_unit_impulse_transforms_to_exact_ones_and_n2_equals_native_bit_for_bit():
    x = torch.zeros(360, dtype=torch.complex128)
    x[0] = 1
    with repmode.enabled():
        y = torch.fft.fft(x)
    assert torch.equal(y, torch.ones(360, dtype=torch.complex128))
    z = _complex((5, 2), seed=3)
    with repmode.enabled():
        got = torch.fft.fft(z)
    assert_bitwise_equal(got, torch.fft.fft(z))


@pytest.mark.parametrize("n", [360, 1009, 1024])
def test_bits_do_not_depend_on_threads_layout_or_batch_composition(n):
    x = _complex((48, n), torch.complex64, seed=1)
    out = assert_invariant(lambda t: {"fft": torch.fft.fft(t, dim=1), "rfft": torch.fft.rfft(t.real, dim=1)}, x)
    with repmode.enabled():
        for i in (0, 17, 47):
            assert_bitwise_equal(torch.fft.fft(x[i]), out["fft"][i], f"row {i}")
            assert_bitwise_equal(torch.fft.rfft(x[i].real.contiguous()), out["rfft"][i], f"rfft row {i}")
        # along dim 0 of the transpose: the same lines, read with a stride
        assert_bitwise_equal(torch.fft.fft(x.t().contiguous(), dim=0).t(), out["fft"], "dim 0")
        assert_bitwise_equal(torch.fft.fft(x.t(), dim=0).t(), out["fft"], "dim 0 of a view")


def test_multidimensional_transforms_do_not_depend_on_the_order_of_dim_or_threads():
    x = _complex((6, 12, 17), seed=4)
    with num_threads(1), repmode.enabled():
        a = torch.fft.fftn(x, dim=(0, 2))
        r = torch.fft.rfftn(x.real, dim=(1, 2))
    with num_threads(2), repmode.enabled():
        b = torch.fft.fftn(x, dim=(2, 0))
        r2 = torch.fft.rfftn(x.real.transpose(0, 1).contiguous().transpose(0, 1), dim=(1, 2))
    assert_bitwise_equal(a, b)
    assert_bitwise_equal(r, r2)


REAL_FNS = {
    "fft": lambda x: torch.fft.fft(x), "rfft": lambda x: torch.fft.rfft(x, norm="ortho"),
    "ihfft": lambda x: torch.fft.ihfft(x), "rfft2": lambda x: torch.fft.rfft2(x, norm="forward"),
    "rfftn": lambda x: torch.fft.rfftn(x, s=(5, 9)), "ihfftn": lambda x: torch.fft.ihfftn(x),
    "fft2": lambda x: torch.fft.fft2(x), "ihfft2": lambda x: torch.fft.ihfft2(x),
}
COMPLEX_FNS = {
    "fft": lambda x: torch.fft.fft(x, n=11), "ifft": lambda x: torch.fft.ifft(x, norm="ortho"),
    "irfft": lambda x: torch.fft.irfft(x), "irfft_n": lambda x: torch.fft.irfft(x, n=15),
    "hfft": lambda x: torch.fft.hfft(x), "fftn": lambda x: torch.fft.fftn(x),
    "ifftn": lambda x: torch.fft.ifftn(x, dim=(0,)), "irfft2": lambda x: torch.fft.irfft2(x),
    "irfftn": lambda x: torch.fft.irfftn(x, s=(4, 10)), "hfft2": lambda x: torch.fft.hfft2(x),
    "hfftn": lambda x: torch.fft.hfftn(x, norm="ortho"), "ifft2": lambda x: torch.fft.ifft2(x),
}


def _grad_run(fn, x, ctx):
    x = x.detach().requires_grad_(True)
    with ctx:
        y = fn(x)
        y = y.resolve_conj()
        shape = torch.view_as_real(y).shape if y.is_complex() else y.shape
        weights = torch.linspace(-1, 2, math.prod(shape), dtype=torch.float64).reshape(shape)
        loss = ((torch.view_as_real(y) if y.is_complex() else y) * weights).sum()
        loss.backward()
    return y.detach(), x.grad


@pytest.mark.parametrize("name", sorted(REAL_FNS))
def test_real_input_transforms_and_their_gradients_match_native(name):
    x = torch.randn(6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    y, g = _grad_run(REAL_FNS[name], x, repmode.enabled())
    y0, g0 = _grad_run(REAL_FNS[name], x, _Null())
    torch.testing.assert_close(y, y0, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(g, g0, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(COMPLEX_FNS))
def test_complex_input_transforms_and_their_gradients_match_native(name):
    x = _complex((6, 7), seed=5)
    y, g = _grad_run(COMPLEX_FNS[name], x, repmode.enabled())
    y0, g0 = _grad_run(COMPLEX_FNS[name], x, _Null())
    torch.testing.assert_close(y, y0, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(g, g0, rtol=1e-12, atol=1e-12)


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_complex_abs_is_hypot_without_overflow_and_canonical_nan():
    z = torch.tensor([3 + 4j, 1e300 + 1e300j, 1e-310 + 1e-310j, complex(math.inf, math.nan), complex(math.nan, 1),
                      0j, -5e-324 + 0j], dtype=torch.complex128)
    with repmode.enabled():
        a = z.abs()
    assert a[0].item() == 5.0
    assert a[1].item() == math.hypot(1e300, 1e300)
    assert a[2].item() == math.hypot(1e-310, 1e-310)
    assert a[3].item() == math.inf
    assert a[4].view(torch.int64).item() == 0x7FF8000000000000
    assert a[5].item() == 0.0 and a[6].item() == 5e-324
    x = _complex(1000, torch.complex64, seed=6)
    with repmode.enabled():
        got = x.abs()
    exact = torch.tensor([math.hypot(float(v.real), float(v.imag)) for v in x], dtype=torch.float64)
    assert torch.equal(got, exact.to(torch.float32))


def test_complex_ops_outside_the_fft_path_are_refused_with_the_boundary():
    z = _complex(8)
    for fn in (torch.exp, lambda t: t.sum(), lambda t: t / (1 + 2j), lambda t: t.add(t, alpha=2)):
        with pytest.raises(repmode.UnsupportedOpError, match="complex"), repmode.enabled():
            fn(z)


def test_other_dtypes_are_refused_by_name():
    with pytest.raises(repmode.UnsupportedOpError, match="float16"), repmode.enabled():
        torch.ops.aten._fft_r2c(torch.randn(8).half(), [0], 0, True)
    with pytest.raises(repmode.UnsupportedOpError, match="complex32"), repmode.enabled():
        torch.ops.aten._fft_c2c(torch.randn(8, 2).half().view(torch.complex32), [0], 0, True)


def _spectrogram_step(seed: int):
    torch.manual_seed(seed)
    n_fft, hop, n_mels = 64, 16, 8
    wave = torch.randn(4, 400)
    fb = torch.rand(n_fft // 2 + 1, n_mels)  # a filterbank: one mm
    head = torch.nn.Linear(n_mels, 3)
    target = torch.tensor([0, 2, 1, 1])
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    gain = torch.ones(1, requires_grad=True)
    losses = []
    with repmode.enabled():
        window = torch.hann_window(n_fft)
        for _ in range(2):
            spec = torch.stft(wave * gain, n_fft, hop_length=hop, window=window, return_complex=True)
            mag = spec.abs()                                          # (4, 33, frames)
            mel = torch.log(torch.matmul(mag.transpose(1, 2), fb) + 1e-6)  # (4, frames, n_mels)
            loss = torch.nn.functional.cross_entropy(head(mel.mean(1)), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
    return [*losses, head.weight.detach().clone(), gain.grad.clone()]


def test_a_spectrogram_front_end_trains_two_steps_with_the_same_bits_at_1_and_2_threads():
    with num_threads(1):
        want = _spectrogram_step(0)
    with num_threads(2):
        got = _spectrogram_step(0)
    assert_bitwise_equal(got, want, "spectrogram training")
    assert torch.isfinite(want[-1]).all() and want[0] != want[1]


@pytest.mark.parametrize("n", [1, 2, 6, 12, 16, 17, 35, 49, 128, 360, 1009, 4096, 1031])
def test_the_lane_walk_equals_the_scalar_reference_bit_for_bit(n, monkeypatch):
    from repmode.kernels import fft as fft_family
    x = _complex((7, n), torch.complex64, seed=n)  # one block of 4 lanes and 3 single lines
    with repmode.enabled():
        fast = (torch.fft.fft(x), torch.fft.ifft(x, norm="ortho"), torch.fft.rfft(x.real), torch.fft.irfft(x, n=2 * n))
    monkeypatch.setattr(fft_family, "USE_REFERENCE", True)
    with repmode.enabled():
        ref = (torch.fft.fft(x), torch.fft.ifft(x, norm="ortho"), torch.fft.rfft(x.real), torch.fft.irfft(x, n=2 * n))
    assert_bitwise_equal(fast, ref)


WINDOWS = {
    "hann": lambda p, d: torch.hann_window(50, periodic=p, dtype=d),
    "hamming": lambda p, d: torch.hamming_window(50, periodic=p, dtype=d),
    "hamming_ab": lambda p, d: torch.hamming_window(33, p, 0.6, 0.3, dtype=d),
    "blackman": lambda p, d: torch.blackman_window(41, periodic=p, dtype=d),
    "bartlett": lambda p, d: torch.bartlett_window(40, periodic=p, dtype=d),
    "signal.hann": lambda p, d: torch.signal.windows.hann(50, sym=not p, dtype=d),
    "signal.gaussian": lambda p, d: torch.signal.windows.gaussian(50, sym=not p, dtype=d),
    "signal.nuttall": lambda p, d: torch.signal.windows.nuttall(50, sym=not p, dtype=d),
}


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_windows_run_in_strict_mode_within_a_few_units_of_rounding_of_native(name, periodic, dtype):
    with repmode.enabled():
        w = WINDOWS[name](periodic, dtype)
    native = WINDOWS[name](periodic, dtype)
    eps = torch.finfo(dtype).eps
    assert w.dtype == dtype and w.shape == native.shape
    # values in [0, 1]; the formulas cancel near 0 (1 - cos), so the bound is absolute
    assert (w - native).abs().max().item() <= 4 * eps


def test_small_windows():
    # (the Kaiser window, built on i0, is tested in tests/families/bessel/test_bessel.py)
    with repmode.enabled():
        assert torch.hann_window(0).numel() == 0 and torch.equal(torch.hann_window(1), torch.ones(1))


def test_istft_inverts_stft_with_the_same_bits_at_1_and_2_threads():
    x = torch.randn(3, 1000, generator=torch.Generator().manual_seed(7), dtype=torch.float64)

    def roundtrip():
        with repmode.enabled():
            w = torch.hann_window(128, dtype=torch.float64)
            spec = torch.stft(x, 128, hop_length=32, window=w, return_complex=True)
            return torch.istft(spec, 128, hop_length=32, window=w, length=1000)

    with num_threads(1):
        one = roundtrip()
    with num_threads(2):
        two = roundtrip()
    assert_bitwise_equal(one, two)
    torch.testing.assert_close(one, x, rtol=1e-12, atol=1e-12)


def test_complex_add_sub_neg_and_mul_by_reals_equal_native_bit_for_bit():
    z, w = _complex((5, 7), torch.complex64, seed=8), _complex((5, 7), torch.complex64, seed=9)
    r = torch.randn(7, generator=torch.Generator().manual_seed(10))
    cases = {"add": lambda: z + w, "sub": lambda: z - w, "neg": lambda: -z, "mul real": lambda: z * r,
             "mul scalar": lambda: z * 2.5, "add real": lambda: z + r.expand(5, 7)}
    for name, fn in cases.items():
        with repmode.enabled():
            got = fn()
        assert_bitwise_equal(got, fn(), name)


def test_complex_products_follow_the_defined_rounding_sequence():
    z, w = _complex(1000, seed=11), _complex(1000, seed=12)
    with repmode.enabled():
        got = z * w
    a, b, c, d = z.real, z.imag, w.real, w.imag
    want = torch.complex(a * c - b * d, a * d + b * c)  # four rounded products, then - and +
    assert_bitwise_equal(got, want)
    zin = z.clone()
    with repmode.enabled():
        zin *= w
    assert_bitwise_equal(zin, want, "in place")


def test_random_shapes_dims_lengths_and_norms_match_native_and_do_not_depend_on_threads():
    rng = torch.Generator().manual_seed(13)
    fns = [torch.fft.fftn, torch.fft.ifftn, torch.fft.rfftn, torch.fft.irfftn, torch.fft.hfftn, torch.fft.ihfftn]
    for case in range(40):
        nd = int(torch.randint(1, 4, (), generator=rng))
        shape = [int(torch.randint(1, 24, (), generator=rng)) for _ in range(nd)]
        ndims = int(torch.randint(1, nd + 1, (), generator=rng))
        dims = torch.randperm(nd, generator=rng)[:ndims].tolist()
        fn = fns[case % len(fns)]
        norm = ["backward", "ortho", "forward"][case % 3]
        dtype = [torch.float32, torch.float64][case % 2]
        x = torch.randn(shape, generator=rng, dtype=dtype)
        if fn in (torch.fft.fftn, torch.fft.ifftn, torch.fft.irfftn, torch.fft.hfftn):
            x = torch.complex(x, torch.randn(shape, generator=rng, dtype=dtype))
        if case % 4 == 3 and nd > 1:
            x = x.transpose(0, -1)  # a strided layout
        if fn in (torch.fft.irfftn, torch.fft.hfftn) and x.shape[dims[-1]] < 2:
            continue  # a one-point half spectrum has no default output length
        with num_threads(1), repmode.enabled():
            one = fn(x, dim=dims, norm=norm)
        with num_threads(2), repmode.enabled():
            two = fn(x, dim=dims, norm=norm)
        assert_bitwise_equal(one.resolve_conj(), two.resolve_conj(), f"case {case}")
        tol = 1e-4 if dtype == torch.float32 else 1e-11
        torch.testing.assert_close(one, fn(x, dim=dims, norm=norm), rtol=tol, atol=tol, msg=f"case {case}")


def test_out_forms_write_the_functional_result():
    z = _complex((3, 12), torch.complex64, seed=14)
    with repmode.enabled():
        want = (torch.fft.fft(z), torch.fft.rfft(z.real), torch.fft.irfft(z))
        got = (torch.empty(3, 12, dtype=torch.complex64), torch.empty(3, 7, dtype=torch.complex64),
               torch.empty(3, 22, dtype=torch.float32))
        torch.fft.fft(z, out=got[0])
        torch.fft.rfft(z.real, out=got[1])
        torch.fft.irfft(z, out=got[2])
    assert_bitwise_equal(got, want)
