"""Integer remainder/floor_divide (exact, native) and arange (integer exact; floating by the
documented float64 formula)."""
from __future__ import annotations

import torch
from support import assert_bitwise_equal

import repmode


def test_integer_ops_and_arange():
    x = torch.tensor([5, 7, -3, 0, -8])
    with repmode.enabled():
        rem, fdiv, r2 = x % 3, x // 2, torch.remainder(x, torch.tensor([2, 3, 4, 5, 3]))
        ar, ar2 = torch.arange(7), torch.arange(2, 20, 3, dtype=torch.int32)
        af = torch.arange(0.0, 1.0, 0.1)
        af64 = torch.arange(-1.5, 2.0, 0.25, dtype=torch.float64)
    assert_bitwise_equal(rem, x % 3)
    assert_bitwise_equal(fdiv, x // 2)
    assert_bitwise_equal(r2, torch.remainder(x, torch.tensor([2, 3, 4, 5, 3])))
    assert_bitwise_equal(ar, torch.arange(7))
    assert_bitwise_equal(ar2, torch.arange(2, 20, 3, dtype=torch.int32))
    want = (torch.arange(10, dtype=torch.float64) * 0.1 + 0.0).float()
    assert_bitwise_equal(af, want)
    assert af.numel() == torch.arange(0.0, 1.0, 0.1).numel()
    assert_bitwise_equal(af64, torch.arange(14, dtype=torch.float64) * 0.25 + -1.5)


def test_floating_remainder_runs_torchs_sequence():
    # (defined and tested with the other exact ops: tests/families/mathtail/test_exact_ops.py)
    x = torch.tensor([1.5, -1.5, 2.0, -0.25])
    with repmode.enabled():
        got = x % 1.0
    assert_bitwise_equal(got, x % 1.0)
