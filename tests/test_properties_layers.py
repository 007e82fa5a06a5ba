"""Property-based tests (hypothesis) over repmode's layer families: scaled_dot_product_attention,
nn.MultiheadAttention / nn.TransformerEncoderLayer, the recurrent layers, index_put/put, and
nll_loss2d with the losses of docs/semantics.md "More losses". Same checks (a)-(e) as
tests/test_properties.py (see its docstring), by tests/property_checks.py's ``check``.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import repmode  # noqa: E402
from conftest import assert_bitwise_equal, bits  # noqa: E402
from property_checks import assert_within, canonical, check, f64, u_chain, u_of  # noqa: E402
from strategies import dtypes_of, tensors  # noqa: E402

aten = torch.ops.aten


# ----------------------------------------------------------------------------- indexing with writes

def _draw_indices(data, x):
    """A drawn index tuple for ``x[...]``: None (full slice), int64 index tensors of one common
    shape (negative indices, repeats) or one bool mask over the leading dims."""
    if data.draw(st.booleans()) and x.dim() >= 1:
        j = data.draw(st.integers(1, x.dim()))
        seed = data.draw(st.integers(0, 999))
        mask = torch.rand(x.shape[:j], generator=torch.Generator().manual_seed(seed)) < 0.5
        return [mask]
    k = data.draw(st.integers(1, x.dim()))
    m = data.draw(st.integers(0, 5))
    ishape = data.draw(st.sampled_from([(m,), (1, m), (m, 1)])) if m else (m,)
    out = []
    for d in range(k):
        if out and data.draw(st.integers(0, 3)) == 0:
            out.append(None)
            continue
        n = x.shape[d]
        vals = data.draw(st.lists(st.integers(-n, n - 1), min_size=math.prod(ishape), max_size=math.prod(ishape)))
        out.append(torch.tensor(vals, dtype=torch.int64).reshape(ishape))
    if all(i is None for i in out):
        out[0] = torch.zeros(ishape, dtype=torch.int64)
    return out


def _destinations(shape, fn_select) -> torch.Tensor:
    """The flat destination of each source position (row-major), by the same selection applied
    to the element ids (advanced indexing moves the ids exactly)."""
    ids = torch.arange(math.prod(shape), dtype=torch.int64).reshape(shape)
    return fn_select(ids).reshape(-1)


def _sequential_accumulate(x, dest, vals):
    """Each destination starts from x and receives its contributions in increasing source
    position, one native single-element add each (one IEEE addition; integers wrap)."""
    acc = x.contiguous().clone().reshape(-1)
    vals = vals.reshape(-1)
    for p in range(dest.numel()):
        d = int(dest[p])
        acc[d:d + 1] = acc[d:d + 1] + vals[p:p + 1]
    return acc.reshape(x.shape)


@given(data=st.data())
def test_index_put_and_put(data):
    """index_put / index_put_ / put / put_ (docs/semantics.md, "Indexing with writes").
    accumulate=True: equal bit for bit (NaNs canonicalized on both sides: where nothing is added
    the input's NaN bits are kept) to a replay adding the contributions in increasing source
    position, one native single-element add each. accumulate=False: a copy, bit for bit native
    torch's result where no destination receives two different bit patterns; where one does,
    repmode raises UnsupportedOpError (torch does not define which write wins)."""
    op = data.draw(st.sampled_from(["index_put", "index_put_", "put", "put_"]))
    dt = data.draw(st.sampled_from(dtypes_of(aten.index_put.default, kinds=("float", "int"))))
    accumulate = data.draw(st.booleans())
    x = data.draw(tensors(dt, min_dims=1, max_dims=3, min_side=1, max_side=4))
    if op.startswith("index_put"):
        idx = _draw_indices(data, x)
        tensors_at = [i for i, t in enumerate(idx) if t is not None]

        def select(t, *its):
            full = list(idx)
            for i, it in zip(tensors_at, its):
                full[i] = it
            return t[tuple(slice(None) if i is None else i for i in full)]
        sel_shape = select(torch.empty(x.shape), *[idx[i] for i in tensors_at]).shape
        vshape = list(sel_shape)[data.draw(st.integers(0, len(sel_shape))):]
        vshape = [data.draw(st.sampled_from([1, s])) for s in vshape]
        v = data.draw(tensors(dt, shape=vshape))
        if data.draw(st.integers(0, 4)) == 0:  # one value broadcast everywhere: equal bits on repeats
            v = data.draw(tensors(dt, shape=()))

        def fn(t, vv, *its):
            full = [None if i is None else its[tensors_at.index(n)] for n, i in enumerate(idx)]
            if op == "index_put":
                return torch.index_put(t, full, vv, accumulate=accumulate)
            return t.clone().index_put_(full, vv, accumulate=accumulate)
        args = (x, v, *[idx[i] for i in tensors_at])
        dest = _destinations(x.shape, lambda ids: select(ids, *args[2:]))
        vals = v.broadcast_to(sel_shape).reshape(-1)
    else:
        m = data.draw(st.integers(0, 6))
        n = x.numel()
        index = torch.tensor(data.draw(st.lists(st.integers(-n, n - 1), min_size=m, max_size=m)),
                             dtype=torch.int64).reshape(data.draw(st.sampled_from([(m,), (1, m)])))
        v = data.draw(tensors(dt, shape=index.shape))

        def fn(t, vv, ii):
            if op == "put":
                return torch.put(t, ii, vv, accumulate=accumulate)
            return t.clone().put_(ii, vv, accumulate=accumulate)
        args = (x, v, index)
        dest = torch.remainder(index.reshape(-1), n)
        vals = v.reshape(-1)

    if accumulate:
        got = check(fn, *args, kernel_nan=False, stride_class=op in ("index_put", "put"))
        if got is not None:
            want = _sequential_accumulate(x, dest, vals)
            assert_bitwise_equal(canonical(got[0]).contiguous(), canonical(want), "sequential reference")
        return
    # accumulate=False: does some destination receive two different bit patterns?
    vb = bits(vals.contiguous()).reshape(-1)
    collide = any(bool((vb[dest == d] != vb[dest == d][0]).any()) for d in dest.unique().tolist())
    if collide:
        with repmode.enabled(strict=True), pytest.raises(repmode.UnsupportedOpError, match="same destination"):
            fn(*args)
        hypothesis.event("colliding writes refused")
        return
    check(fn, *args, kernel_nan=False, stride_class=op in ("index_put", "put"), exact=lambda *a: [fn(*a)])
