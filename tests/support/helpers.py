"""Shared helpers for repmode's tests: thread control, ISA paths, layouts, bitwise equality.
(Moved here from tests/conftest.py; import them as ``from support import ...``.)"""
from __future__ import annotations

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import repmode
from repmode import _ext

THREAD_COUNTS = (1, 2, 3)


def available_isas() -> list[str]:
    order = ["scalar", "avx2", "avx512"]
    return order[: order.index(_ext.C.best_cpu_isa()) + 1]


@contextlib.contextmanager
def num_threads(n: int):
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


@contextlib.contextmanager
def cpu_isa(name: str):
    old = _ext.cpu_isa()
    _ext.set_cpu_isa(name)
    try:
        yield
    finally:
        _ext.set_cpu_isa(old)


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bit patterns as integers (so -0.0 != +0.0 and NaN == NaN of the same pattern)."""
    t = t.detach().contiguous()
    as_int = {torch.float32: torch.int32, torch.float64: torch.int64, torch.bfloat16: torch.int16,
              torch.float16: torch.int16}
    return t.view(as_int.get(t.dtype, t.dtype))


def float32_neighbours(x: torch.Tensor, k: int) -> torch.Tensor:
    """Each float32 of x and its k nearest floats on either side by bit pattern (clamped to the int32
    range), concatenated by offset: the inputs around a kernel's branch points and range edges."""
    b = x.view(torch.int32).to(torch.int64)
    return torch.cat([b + d for d in range(-k, k + 1)]).clamp(-2**31, 2**31 - 1).to(torch.int32).view(torch.float32)


def assert_bitwise_equal(a, b, what: str = "") -> None:
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for i, (x, y) in enumerate(zip(a, b)):
            assert_bitwise_equal(x, y, f"{what}[{i}]")
        return
    assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
    differ = (bits(a) != bits(b))
    assert not differ.any(), f"{what}: {int(differ.sum())} of {a.numel()} elements differ in their bits"


def under_repmode(fn, *args, threads: int = 2, **kwargs):
    with num_threads(threads), repmode.enabled():
        return fn(*args, **kwargs)


def layouts(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The same values of a 2-D tensor in several memory layouts."""
    assert x.dim() == 2
    transposed = x.t().contiguous().t()
    big = torch.zeros(x.shape[0] * 2, x.shape[1] * 3, dtype=x.dtype)
    big[::2, ::3] = x
    sliced = big[::2, ::3]
    assert torch.equal(transposed, x) and torch.equal(sliced, x)
    return {"contiguous": x.contiguous(), "transposed": transposed, "sliced": sliced}


def assert_invariant(compute, *inputs) -> dict:
    """``compute(*inputs)`` returns a dict of outputs. Assert they have the same bits at 1, 2 and
    3 threads, on every available ISA path, and with every 2-D tensor input stored contiguous,
    transposed and sliced. Returns the outputs at 1 thread."""
    with num_threads(1), repmode.enabled():
        want = compute(*inputs)

    def check(got, what):
        for k in want:
            assert_bitwise_equal(want[k], got[k], f"{k} {what}")

    for threads in THREAD_COUNTS[1:]:
        with num_threads(threads), repmode.enabled():
            check(compute(*inputs), f"threads={threads}")
    for isa in available_isas():
        with cpu_isa(isa), repmode.enabled():
            check(compute(*inputs), f"isa={isa}")
    for name in ("contiguous", "transposed", "sliced"):
        laid = [layouts(t)[name] if isinstance(t, torch.Tensor) and t.dim() == 2 else t for t in inputs]
        with repmode.enabled():
            check(compute(*laid), f"layout={name}")
    return want


def ulp_distance_f32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Distance in float32 ulps (on the ordered integer line) between two float32 tensors."""
    def ordered(t):
        i = t.contiguous().view(torch.int32).to(torch.int64)
        return torch.where(i < 0, -(i & 0x7FFFFFFF), i)
    return (ordered(a) - ordered(b)).abs()


class OpRecorder(TorchDispatchMode):
    """A plain dispatch mode (a user's, or a probe): records the name of every overload it sees and
    runs it natively."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))
