"""Property tests (hypothesis) of the resampling kernels on random geometry: every mode, 1-3
resampled axes, sizes from 1, up- and downsampling with and without scale arguments,
align_corners, channel counts around the 64-lane block, contiguous / channels_last / sliced
layouts and 1 or 2 threads: the fast paths equal the plain reference loops bit for bit, forward
and backward."""
from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
import torch  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from support import assert_bitwise_equal, num_threads  # noqa: E402

import repmode  # noqa: E402
from repmode.kernels import resample  # noqa: E402

aten = torch.ops.aten

# (op, backward op, number of resampled axes, takes align_corners)
OPS = [
    (aten.upsample_nearest1d, aten.upsample_nearest1d_backward, 1, False),
    (aten.upsample_nearest2d, aten.upsample_nearest2d_backward, 2, False),
    (aten.upsample_nearest3d, aten.upsample_nearest3d_backward, 3, False),
    (aten._upsample_nearest_exact2d, aten._upsample_nearest_exact2d_backward, 2, False),
    (aten.upsample_linear1d, aten.upsample_linear1d_backward, 1, True),
    (aten.upsample_bilinear2d, aten.upsample_bilinear2d_backward, 2, True),
    (aten.upsample_bicubic2d, aten.upsample_bicubic2d_backward, 2, True),
    (aten.upsample_trilinear3d, aten.upsample_trilinear3d_backward, 3, True),
    (aten._upsample_bilinear2d_aa, aten._upsample_bilinear2d_aa_backward, 2, True),
    (aten._upsample_bicubic2d_aa, aten._upsample_bicubic2d_aa_backward, 2, True),
]


@st.composite
def geometries(draw):
    op, bwd, nsp, has_ac = draw(st.sampled_from(OPS))
    n = draw(st.integers(1, 2))
    c = draw(st.sampled_from([1, 3, 4, 5, 64, 67]))
    sizes = [draw(st.integers(1, 9)) for _ in range(nsp)]
    outs = [draw(st.integers(1, 13)) for _ in range(nsp)]
    with_scales = draw(st.booleans())
    scales = [draw(st.floats(0.2, 4.0)) if with_scales else None for _ in range(nsp)]
    ac = draw(st.booleans()) if has_ac else None
    layout = draw(st.sampled_from(["contiguous", "channels_last", "sliced"]))
    threads = draw(st.sampled_from([1, 2]))
    seed = draw(st.integers(0, 2**16))
    return op, bwd, nsp, [n, c] + sizes, outs, scales, ac, layout, threads, seed


def _laid(t, layout):
    if layout == "channels_last" and t.dim() in (4, 5):
        return t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    if layout == "sliced":
        big = torch.zeros([2 * s + 1 for s in t.shape], dtype=t.dtype)
        view = big[tuple(slice(1, None, 2) for _ in t.shape)]
        view.copy_(t)
        return view
    return t


def _call(op, bwd, x, g, outs, scales, ac, in_shape):
    extra = [] if ac is None else [ac]
    with repmode.enabled():
        y = op.default(x, outs, *extra, *scales)
        gi = bwd.default(g, outs, in_shape, *extra, *scales)
    return y.contiguous(), gi.contiguous()


@given(geometries())
def test_fast_paths_equal_the_reference_loops_on_random_geometry(geom):
    op, bwd, nsp, in_shape, outs, scales, ac, layout, threads, seed = geom
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(in_shape, generator=gen, dtype=torch.float32)
    g = torch.randn(in_shape[:2] + outs, generator=gen, dtype=torch.float32)
    resample.USE_REFERENCE = True
    try:
        want = _call(op, bwd, x, g, outs, scales, ac, in_shape)
    finally:
        resample.USE_REFERENCE = False
    with num_threads(threads):
        got = _call(op, bwd, _laid(x, layout), _laid(g, layout), outs, scales, ac, in_shape)
    assert_bitwise_equal(got, want, f"{op} {layout} threads={threads}")
