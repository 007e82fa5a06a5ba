"""The AVX2 and AVX-512 array versions of the float32 lgamma, digamma and erfinv
(csrc/cpu/vec_special.cpp, vec_special_lanes.h) against the scalar formula, bit for bit: the scalar
ISA path (REPMODE_CPU_ISA=scalar, the per-element EwFormula) is the reference, and every other
path this CPU has must give the same bits on a dense sweep of float32 bit patterns (every 4099th),
the special values, both sides of every region boundary of the formulas, random inputs of the
benchmark's distributions, every length 0..40 at several offsets (the W-lane groups and their
padded last group), strided and in-place forms, and 1 vs 2 threads; for erfinv, whose lanes use
Ziv's strategy, also inputs where the lanes' approximation cannot decide the rounding. All 2^32
inputs: csrc/verify/check_vec_special.cpp; erfinv's bound: csrc/verify/check_erfinv_fast.cpp
(docs/evidence.md)."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode

FUNCS = {"lgamma": torch.lgamma, "digamma": torch.digamma, "erfinv": torch.erfinv}

# The region boundaries of each float32 definition (csrc/common/math_special.h and the region
# tables of csrc/cpu/vec_special.cpp), each with its float neighbours below and above.
BOUNDARIES = {
    "lgamma": [0.25, 0.5, 0.75, 1.0, 1.25, 2.0, 2.75, 3.5, 4.5, 5.5, 11.5, 12.0, 2.0**24, 2.0**100, 1e38],
    "digamma": [2.0**-60, 1.0, 1.4616321449683622, 2.0, 3.0, 9.0, 10.0, 2.0**30, 1e38],
    # 0.875, 0.9375, 0.96 and 0.9995: the pieces of the erfinv lanes' approximation (as float32)
    "erfinv": [2.0**-149, 2.0**-126, 2.0**-100, 0.5, 0.75, 0.875, 0.9, 0.9375, 0.96, 0.99, 0.9995,
               1.0 - 2.0**-24],
}
# erfinv inputs whose lane approximation fails Ziv's test (found by csrc/verify/check_erfinv_fast.cpp
# --show): these lanes take the scalar formula. Subnormal and normal inputs of the |x| <= 3/4 piece,
# then of the pieces (3/4, 7/8], (7/8, 15/16], (15/16, 0.96], (0.96, 0.9995] (the last piece,
# (0.9995, 1), has none).
ERFINV_FALLBACK = [0x0011094A, 0x00121197, 0x3E80BB52, 0x3F00AEA2, 0x3F018561, 0x3F40C1DC, 0x3F413FAD,
                   0x3F419702, 0x3F603FF9, 0x3F60B663, 0x3F611CFD, 0x3F709904, 0x3F71403C, 0x3F75341B,
                   0x3F7623F1, 0x3F7638B7, 0x3F765538]
SPECIALS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFA00005,
            0x7F800001, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
            0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x40000000, 0xC0000000, 0x3F7FFFFF, 0xBF7FFFFF, 0x3F800001]


def _from_bits(patterns) -> torch.Tensor:
    t = torch.tensor([b - 2**32 if b >= 2**31 else b for b in patterns], dtype=torch.int64)
    return t.to(torch.int32).view(torch.float32)


def _neighbours(values) -> torch.Tensor:
    x = torch.tensor(values, dtype=torch.float64).to(torch.float32)
    x = torch.cat([x, -x])
    up, down = torch.nextafter(x, torch.tensor(float("inf"))), torch.nextafter(x, torch.tensor(float("-inf")))
    return torch.cat([x, up, down, torch.nextafter(up, torch.tensor(float("inf"))),
                      torch.nextafter(down, torch.tensor(float("-inf")))])


def _inputs(name: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(26)
    sweep = torch.arange(0, 2**32, 4099, dtype=torch.int64).to(torch.int32).view(torch.float32)
    parts = [sweep, _from_bits(SPECIALS), _neighbours(BOUNDARIES[name])]
    if name == "erfinv":
        parts += [torch.rand(1 << 15, generator=g) * 2 - 1, 1 - torch.rand(1 << 12, generator=g) * 1e-5]
    else:
        parts += [torch.rand(1 << 15, generator=g) * 20 + 0.01, torch.randn(1 << 12, generator=g) * 8,
                  torch.rand(1 << 12, generator=g) * 1e-3]
    return torch.cat(parts)


def _by_isa(fn, x, threads=2):
    out = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(threads), repmode.enabled():
            out[isa] = fn(x)
    return out


def test_the_vector_paths_are_available_here():
    """This host must exercise at least one vector path, or the tests below compare nothing."""
    assert "avx2" in available_isas()


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_every_path_equals_the_scalar_formula_on_sweep_specials_boundaries_random(name):
    x = _inputs(name)
    results = _by_isa(FUNCS[name], x)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")
    # the regions the vector kernels cover are really reached by these inputs
    finite = results["scalar"][torch.isfinite(x)]
    assert finite.numel() > 1_000_000 and torch.isfinite(finite).float().mean() > 0.3


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_thread_count_does_not_change_the_bits(name):
    x = _inputs(name)[-40000:]
    for isa in available_isas()[1:]:
        with cpu_isa(isa):
            one = _by_isa(FUNCS[name], x, threads=1)[isa]
            two = _by_isa(FUNCS[name], x, threads=2)[isa]
        assert_bitwise_equal(two, one, f"{name} {isa}")


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_every_tail_length_and_offset(name):
    """Lengths 0..40 at offsets 0, 1, 5, 13: the W-lane groups of each region, the padded last
    group, regions with a single element."""
    g = torch.Generator().manual_seed(3)
    if name == "erfinv":
        pool = torch.rand(100, generator=g) * 2 - 1
    else:
        pool = torch.cat([torch.rand(80, generator=g) * 14 + 0.01, torch.randn(20, generator=g) * 3])
    pool = pool[torch.randperm(pool.numel(), generator=g)]
    results = {}
    for isa in available_isas():
        got = []
        with cpu_isa(isa), num_threads(1), repmode.enabled():
            for length in range(41):
                for offset in (0, 1, 5, 13):
                    got.append(FUNCS[name](pool[offset:offset + length]))
        results[isa] = torch.cat(got)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_strided_and_in_place_forms(name):
    g = torch.Generator().manual_seed(4)
    base = (torch.rand(64, 33, generator=g) * 1.98 - 0.99) if name == "erfinv" else \
        (torch.rand(64, 33, generator=g) * 16 + 0.01)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            want = FUNCS[name](base)
            assert_bitwise_equal(FUNCS[name](base.t()), want.t(), f"{name} {isa} transposed")
            assert_bitwise_equal(FUNCS[name](base[:, 1::2]), want[:, 1::2], f"{name} {isa} sliced")
            y = base.clone()
            getattr(y, name + "_")()
            assert_bitwise_equal(y, want, f"{name} {isa} in place")
        with cpu_isa("scalar"), repmode.enabled():
            assert_bitwise_equal(FUNCS[name](base), want, f"{name} {isa} vs scalar")


def test_erfinv_lanes_that_fall_back_to_the_scalar_formula():
    """The pinned inputs (and their negatives) are hard cases: erfinv(x) lies within 2^-34
    (relative) of a midpoint between two float32s, so the lanes' approximation cannot decide the
    rounding and the scalar formula runs; each with its 4 float neighbours (which mostly do not
    fall back), in a group of easy inputs, as the first, last and middle lane. Every path must
    equal the scalar formula bit for bit."""
    hard = _from_bits(ERFINV_FALLBACK)
    ref = torch.erfinv(hard.double())
    f = ref.float()
    up = torch.nextafter(f, torch.tensor(float("inf"))).double()
    down = torch.nextafter(f, torch.tensor(float("-inf"))).double()
    mid = torch.where(ref > f.double(), (f.double() + up) / 2, (f.double() + down) / 2)  # the nearest one
    assert ((ref - mid).abs() / ref.abs() < 2.0**-34).all(), (ref - mid).abs() / ref.abs()
    both = torch.cat([hard, -hard])
    near = torch.cat([both] + [torch.nextafter(both, torch.tensor(d)) for d in (float("inf"), float("-inf"))])
    near = torch.cat([near, torch.nextafter(near, torch.tensor(float("inf")))])
    g = torch.Generator().manual_seed(11)
    easy = torch.rand(31, generator=g) * 1.9 - 0.95
    groups = [torch.cat([near, easy]), torch.cat([easy, near]), torch.cat([easy[:13], near, easy[13:]])]
    for x in groups:
        results = _by_isa(torch.erfinv, x)
        for isa, got in results.items():
            assert_bitwise_equal(got, results["scalar"], f"erfinv {isa}")
