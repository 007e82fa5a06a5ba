"""Edge cases with defined bits (docs/semantics.md, "Edge cases"): NaN payloads, signed zeros,
reductions over empty ranges, integer wrap-around, and element offsets beyond 2^31."""
from __future__ import annotations

import mmap

import pytest
import torch
from support import bits

import repmode

aten = torch.ops.aten
CANONICAL_NAN = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000}


def _odd_nans(dtype):
    """Quiet and signalling NaNs with payloads and both signs."""
    if dtype == torch.float32:
        pats = [0x7FC00001, -0x00400001, 0x7F800001, -0x7FFFFFFF - 1 + 0x7FC12345]
        return torch.tensor(pats, dtype=torch.int32).view(torch.float32)
    pats = [0x7FF8000000000001, -0x0008000000000001, 0x7FF0000000000001]
    return torch.tensor(pats, dtype=torch.int64).view(torch.float64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name, fn", [
    ("add", lambda t: t + 1), ("mul", lambda t: t * 2), ("neg", torch.neg), ("abs", torch.abs),
    ("relu", torch.relu), ("exp", torch.exp), ("sqrt", torch.sqrt), ("sum", lambda t: t.sum().reshape(1)),
    ("amax", lambda t: t.amax().reshape(1)), ("softmax", lambda t: torch.softmax(t, 0)),
    ("mm", lambda t: (t.reshape(-1, 1) @ t.reshape(1, -1)).reshape(-1)),
    ("0/0", lambda t: (t * 0) / 0), ("log(-1)", lambda t: torch.log(t * 0 - 1)),
])
def test_every_nan_a_kernel_writes_is_canonical(dtype, name, fn):
    x = _odd_nans(dtype)
    with repmode.enabled():
        out = fn(x)
    assert torch.isnan(out).all()
    assert (bits(out) == CANONICAL_NAN[dtype]).all(), f"{name}: {[hex(v) for v in bits(out).tolist()]}"


def test_data_movement_keeps_nan_payloads_and_digest_canonicalizes_them():
    x = _odd_nans(torch.float32)
    with repmode.enabled():
        moved = [x.clone(), torch.where(x == x, x, x), x.view(2, 2).t().contiguous().t().reshape(-1)]
    for m in moved:
        assert torch.equal(bits(m), bits(x))
    canonical = torch.full((4,), CANONICAL_NAN[torch.float32], dtype=torch.int32).view(torch.float32)
    assert repmode.digest(x) == repmode.digest(canonical)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_gather_copies_nan_payloads(dtype):
    # torch's own CPU gather rewrites 16-bit NaN payloads; repmode's copies them bit for bit
    patterns = {torch.bfloat16: [0x7F81, 0xFFC3, 0x7FA0, 0x3F80], torch.float16: [0x7D01, 0xFE13, 0x7C80, 0x3C00],
                torch.float32: [0x7F800123, 0xFFC00042, 0x7FA00000, 0x3F800000]}[dtype]
    as_int = torch.int16 if dtype.itemsize == 2 else torch.int32
    x = torch.tensor([p - (1 << 8 * dtype.itemsize) if p >= 1 << (8 * dtype.itemsize - 1) else p
                      for p in patterns * 4], dtype=as_int).view(dtype).view(4, 4).t()
    index = torch.tensor([[3, 2, 1, 0, 0, 1]] * 4)
    with repmode.enabled():
        got = torch.gather(x, 1, index)
    want = x.contiguous().view(as_int).gather(1, index)
    assert torch.equal(got.view(as_int), want)


def _signs(t: torch.Tensor) -> list[bool]:
    """True where the sign bit is set."""
    return torch.signbit(t).reshape(-1).tolist()


def test_signed_zeros():
    nz = torch.full((5,), -0.0)
    cases = {  # name: (computation, sign bits expected)
        "sum of -0.0s": (lambda: nz.sum(), [True]),            # lanes start at -0.0 (Sum order)
        "sum(0) of -0.0s": (lambda: nz.reshape(5, 1).sum(0), [True]),
        "mean of -0.0s": (lambda: nz.mean(), [True]),
        "cumsum of -0.0s": (lambda: nz.cumsum(0), [True] * 5),
        "prod of -0.0s": (lambda: nz.prod(), [True]),
        "empty sum": (lambda: nz[:0].sum(), [False]),          # an empty sum is +0.0
        "x * 0": (lambda: torch.tensor([-3.0, 3.0]) * 0, [True, False]),
        "-0 + 0": (lambda: nz + 0.0, [False] * 5),             # IEEE: -0 + +0 = +0
        "-0 - 0": (lambda: nz - 0.0, [True] * 5),
        "mm of -0.0s": (lambda: nz.reshape(1, 5) @ torch.ones(5, 1), [False]),  # fma chain from +0.0
        "mm -1 * 0": (lambda: torch.tensor([[-1.0]]) @ torch.tensor([[0.0]]), [False]),
        "mm k=0": (lambda: torch.ones(2, 0) @ torch.ones(0, 2), [False] * 4),
    }
    with repmode.enabled():
        got = {name: fn() for name, (fn, _) in cases.items()}
    for name, (_, want) in cases.items():
        assert (got[name] == 0).all(), name
        assert _signs(got[name]) == want, name
    # native torch starts its sums from +0.0: the one documented difference
    assert _signs(nz.sum()) == [False]


def test_relu_and_clamp_of_negative_zero_give_positive_zero():
    # documented (Elementwise: relu(-0) = +0, clamp(-0, min=0) = +0); native torch keeps -0.0 here
    nz = torch.full((3,), -0.0)
    with repmode.enabled():
        got = [torch.relu(nz), torch.clamp(nz, min=0)]
    for g in got:
        assert _signs(g) == [False] * 3
    assert _signs(torch.relu(nz)) == [True] * 3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_reductions_over_empty_dims(dtype):
    e = torch.empty(0, 3, dtype=dtype)
    with repmode.enabled():
        empty_sum = e.sum()
        assert e.sum(0).tolist() == [0, 0, 0]
        assert e.prod().item() == 1 and e.prod(0).tolist() == [1, 1, 1]
        assert torch.isnan(e.mean()) and torch.isnan(e.mean(0)).all()
        assert (bits(e.to(torch.float32).mean(0)) == CANONICAL_NAN[torch.float32]).all()
        assert e.amax(1).shape == (0,) and e.max(1).values.shape == (0,)
        assert e.logsumexp(0).tolist() == [float("-inf")] * 3
        assert torch.linalg.vector_norm(e).item() == 0
        assert e.cumsum(0).shape == (0, 3) and e.softmax(0).shape == (0, 3)
    assert empty_sum.item() == 0 and not torch.signbit(empty_sum)
    with repmode.enabled():
        ints = torch.empty(0, dtype=torch.int64)
        assert ints.sum().item() == 0 and ints.prod().item() == 1


_NO_IDENTITY = [
    ("amax()", lambda e: e.amax()), ("amin()", lambda e: e.amin()), ("max()", lambda e: e.max()),
    ("min()", lambda e: e.min()), ("amax(0)", lambda e: e.amax(0)), ("amax((0, 1))", lambda e: e.amax((0, 1))),
    ("amax(-2)", lambda e: e.amax(-2)), ("max(0)", lambda e: e.max(0)), ("min(0)", lambda e: e.min(0)),
    ("argmax()", lambda e: e.argmax()), ("argmin(0)", lambda e: e.argmin(0)),
    ("norm(inf)", lambda e: torch.linalg.vector_norm(e, float("inf"))),
    ("norm(-1, dim=0)", lambda e: torch.linalg.vector_norm(e, -1, dim=0)),
    ("empty 1-D max(0)", lambda e: e[0].max(0)),
]


@pytest.mark.parametrize("name, fn", _NO_IDENTITY, ids=[n for n, _ in _NO_IDENTITY])
def test_reductions_without_identity_raise_like_torch(name, fn):
    e = torch.empty(0, 3)
    if name.startswith("empty 1-D"):
        e = torch.empty(1, 0)
    with pytest.raises(Exception) as native:
        fn(e)
    with repmode.enabled(), pytest.raises(Exception) as ours:
        fn(e)
    assert type(ours.value) is type(native.value), f"{name}: {ours.value!r} vs torch's {native.value!r}"
    assert not isinstance(ours.value, repmode.UnsupportedOpError)
    head = "linalg.vector_norm" if "norm" in name else name.split("(")[0].split()[-1] + "()"
    assert str(ours.value).startswith(head), str(ours.value)


def test_empty_input_with_empty_output_is_checked_like_torch():
    with pytest.raises(IndexError), repmode.enabled():
        torch.empty(0, 0).amax(1)       # torch refuses: dim 1 is empty, even though the output is too
    with repmode.enabled():
        assert torch.empty(0, 3).amax(1).shape == (0,)


@pytest.mark.parametrize("name, fn", [
    ("int64 add", lambda: torch.tensor([2**62, -2**63]) + torch.tensor([2**62, -1])),
    ("int64 mul", lambda: torch.tensor([2**62, 3]) * 4),
    ("int64 sum", lambda: torch.tensor([2**63 - 1, 1, 5]).sum()),
    ("int64 cumsum", lambda: torch.tensor([2**62, 2**62, 2**62]).cumsum(0)),
    ("int64 prod", lambda: torch.tensor([2**40, 2**40, 3]).prod()),
    ("int64 neg min", lambda: -torch.tensor([-2**63])),
    ("int64 abs min", lambda: torch.tensor([-2**63]).abs()),
    ("int64 floor_divide min/-1", lambda: torch.tensor([-2**63]) // -1),
    ("int32 add", lambda: torch.tensor([2**31 - 1], dtype=torch.int32) + 1),
    ("int32 mul", lambda: torch.tensor([2**31 - 1], dtype=torch.int32) * torch.tensor([2**31 - 1], dtype=torch.int32)),
    ("int32 sum to int32", lambda: torch.full((3,), 2**30, dtype=torch.int32).sum(dtype=torch.int32)),
    ("int8 add", lambda: torch.tensor([127], dtype=torch.int8) + 1),
    ("uint8 sub", lambda: torch.tensor([0, 3], dtype=torch.uint8) - 4),
])
def test_integer_overflow_wraps_like_torch(name, fn):
    want = fn()
    with repmode.enabled():
        got = fn()
    assert got.dtype == want.dtype and torch.equal(got, want), f"{name}: {got} vs torch {want}"


def test_integer_sum_promotes_before_it_can_overflow():
    x = torch.full((3,), 2**30, dtype=torch.int32)
    with repmode.enabled():
        s = x.sum()
    assert s.dtype == torch.int64 and s.item() == 3 * 2**30


def _huge_address_space(elements: int) -> torch.Tensor:
    """A float32 tensor over `elements` elements of anonymous memory reserved lazily: pages never
    written cost no memory, so offsets beyond 2^31 elements can be tested on a small machine."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0x4000)
    try:
        buf = mmap.mmap(-1, elements * 4, flags=flags)
    except (OSError, ValueError, OverflowError) as exc:
        pytest.skip(f"cannot reserve {elements * 4 / 2**30:.0f} GiB of address space here: {exc}")
    return torch.frombuffer(buf, dtype=torch.float32)


def test_element_offsets_beyond_2_31_are_64_bit():
    """A (3, 5) view whose elements lie up to 3.2e9 elements (12.9 GB) apart: every kernel must
    compute offsets in 64 bits, so results equal those of the same values stored compactly."""
    base = _huge_address_space(2**32)
    view = base.as_strided((3, 5), (2**30 + 3, 2**28 - 1))
    assert view.storage_offset() + 2 * view.stride(0) + 4 * view.stride(1) > 2**31 + 2**30
    vals = torch.randn(3, 5, generator=torch.Generator().manual_seed(7))
    view.copy_(vals)
    ops = {
        "sum(1)": lambda t: t.sum(1), "sum(0)": lambda t: t.sum(0), "exp": torch.exp, "add": lambda t: t + t,
        "mm": lambda t: t @ vals.t(), "mm^T": lambda t: t.t() @ vals, "amax": lambda t: t.amax(1),
        "log_softmax": lambda t: torch.log_softmax(t, 1),
        "layer_norm": lambda t: torch.nn.functional.layer_norm(t, (5,)),
        "cumsum": lambda t: t.cumsum(1), "var": lambda t: t.var(0),
    }
    with repmode.enabled():
        for name, fn in ops.items():
            got, want = fn(view), fn(vals)
            assert torch.equal(bits(got), bits(want)), name


@pytest.mark.slow
def test_a_sum_of_more_than_2_31_terms():
    # 2^31 + 5 ones (a stride-0 view, no memory). In the Sum order: 524288 chunks of 4096 and one
    # of 5; the 129 level-2 values 2^24 (x128) and 5 give lane 0 2^26 + 5 -> 2^26 + 8 (nearest),
    # and the halving tree's first step 2^26 + 8 + 2^26 = 2^27 + 8 -> 2^27 (tie to even): 2^31.
    x = torch.ones(1).expand(2**31 + 5)
    with repmode.enabled():
        s = x.sum()
    assert s.item() == 2.0**31
