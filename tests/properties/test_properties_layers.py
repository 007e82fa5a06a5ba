"""Property-based tests (hypothesis) over repmode's layer families: scaled_dot_product_attention,
nn.MultiheadAttention / nn.TransformerEncoderLayer, the recurrent layers, index_put/put, and
nll_loss2d with the losses of docs/semantics.md "More losses". Same checks (a)-(e) as
tests/properties/test_properties.py (see its docstring), by tests/support/property_checks.py's ``check``.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from support import assert_bitwise_equal, num_threads  # noqa: E402
from support.property_checks import assert_within, canonical, check, f64, u_chain, u_of  # noqa: E402
from support.recurrent_reference import lstm_module as restated_lstm  # noqa: E402
from support.strategies import dtypes_of, tensors  # noqa: E402

import repmode  # noqa: E402

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


def _copy_reference(x, dest, vals):
    """x with the bit pattern of vals[p] written at flat position dest[p] for p = 0, 1, ... in that
    order (one write at a time: the last write in index order wins)."""
    out = x.contiguous().clone()
    iv = {torch.float32: torch.int32, torch.float64: torch.int64}.get(x.dtype, torch.int16)
    flat = out.view(iv).view(-1) if x.is_floating_point() else out.view(-1)
    src = vals.contiguous().view(iv).reshape(-1) if x.is_floating_point() else vals.reshape(-1)
    for p, d in enumerate(dest.reshape(-1).tolist()):
        flat[d] = src[p]
    return out


@given(data=st.data())
def test_index_put_and_put(data):
    """index_put / index_put_ / put / put_ (docs/semantics.md, "Indexing with writes").
    accumulate=True: equal bit for bit (NaNs canonicalized on both sides: where nothing is added
    the input's NaN bits are kept) to a replay adding the contributions in increasing source
    position, one native single-element add each. accumulate=False: a copy, bit for bit native
    torch's result where no destination receives two different bit patterns; where one does, the
    last write in index order wins (torch does not define which), as in a one-at-a-time replay."""
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
    # accumulate=False: a copy; where two positions name one destination, the later one wins
    # the reference writes the bits (native torch's bool-mask index_put quiets a signalling NaN:
    # 0x7F800001 becomes 0x7FC00001; repmode copies bit patterns as documented)
    check(fn, *args, kernel_nan=False, stride_class=op in ("index_put", "put"),
          exact=lambda *a: [_copy_reference(x, dest, vals)])


# ----------------------------------------------------------------------------- nll_loss2d, more losses

def _with_grad_of_first(loss):
    def run(a, *rest):
        g = rest[-1]
        a = a.detach().requires_grad_(True)
        out = loss(a, *rest[:-1])
        (ga,) = torch.autograd.grad(out, a, g if out.dim() else None)
        return out, ga
    return run


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@given(data=st.data())
def test_nll_loss2d_and_extra_losses(data):
    """nll_loss on (N, C, H, W) / (N, C, d1) inputs (nll_loss2d_forward/backward) with class
    weights, ignore_index and the three reductions; cross_entropy with weights, ignore_index,
    label smoothing or probability targets (also on (N, C, H, W)); l1_loss; kl_div (log_target
    either way, reductions incl. batchmean); forward and backward.

    Bounds: every per-position term is a short formula (≤ c·u relative error per op, c ≤ 8) of
    magnitude ≤ r (r = w·(|x|+|lse|+1)-type quantities, written per loss below), the reductions
    are sums of n terms (γ_n·Σr) and 'mean' divides once by a denominator D that is itself a sum
    of n weights ((n+2)·u relative), so |loss − ref| ≤ (n + C + 16)·u·Σr/D + (n+4)·u·|ref|.
    Gradients: one product/division chain per element after log_softmax/softmax (C terms), so
    within (n + C + 16)·u·(|g_ref| + |g|·ρ/D) with ρ the per-element scale of the local factor."""
    name = data.draw(st.sampled_from(["nll2d", "cross_entropy", "l1", "kl_div"]))
    reduction = data.draw(st.sampled_from(["none", "sum", "mean"]))
    if name in ("nll2d", "cross_entropy"):
        dt = data.draw(st.sampled_from(dtypes_of(aten.nll_loss2d_forward.default)))
        if name == "cross_entropy":
            dt = data.draw(st.sampled_from(dtypes_of(aten._log_softmax.default)))
        n, c = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 4))
        spatial = data.draw(st.sampled_from([(), (2,), (2, 3), (1, 4), (3, 0)]))
        if name == "nll2d" and not spatial:
            spatial = (2, 2)
        x = data.draw(tensors(dt, shape=(n, c, *spatial), scales=(1.0, 10.0)))
        tshape = (n, *spatial)
        ignore = data.draw(st.sampled_from([-100, 0, c - 1]))
        gen = torch.Generator().manual_seed(data.draw(st.integers(0, 999)))
        t = torch.randint(0, c, tshape, generator=gen)
        t = torch.where(torch.rand(tshape, generator=gen) < 0.2, torch.full_like(t, ignore), t)
        w = data.draw(tensors(dt, shape=(c,), positive=True, specials=False)) if data.draw(st.booleans()) else None
        smoothing = 0.0
        probs = False
        if name == "cross_entropy":
            smoothing = data.draw(st.sampled_from([0.0, 0.1, 0.5]))
            probs = data.draw(st.integers(0, 3)) == 0
            if probs:  # probabilities as targets: a softmax of drawn values, rounded to dt
                t = torch.softmax(data.draw(tensors(dt, shape=x.shape, specials=False)).double(), 1).to(dt)

        def loss(a, tt, ww):
            if name == "nll2d":
                return F.nll_loss(a, tt, weight=ww, ignore_index=ignore, reduction=reduction)
            return F.cross_entropy(a, tt, weight=ww, ignore_index=ignore, reduction=reduction,
                                   label_smoothing=smoothing)
        out_shape = () if reduction != "none" else (tshape if not probs else tshape)
        g = data.draw(tensors(dt, shape=out_shape, specials=False))
        args = (x, t, w, g)
    else:
        dt = data.draw(st.sampled_from(dtypes_of(aten.mse_loss.default)))
        x = data.draw(tensors(dt, max_dims=3))
        log_target = data.draw(st.booleans())
        t = data.draw(tensors(dt, shape=x.shape, positive=(name == "kl_div" and not log_target)))
        red = reduction
        if name == "kl_div" and reduction == "mean" and data.draw(st.booleans()):
            red = "batchmean"

        def loss(a, tt):
            if name == "l1":
                return F.l1_loss(a, tt, reduction=red)
            return F.kl_div(a, tt, reduction=red, log_target=log_target)
        g = data.draw(tensors(dt, shape=x.shape if red == "none" else (), specials=False))
        args = (x, t, g)

    run = _with_grad_of_first(loss)

    def bound(inp, out):
        ins = f64(*inp)
        a64 = ins[0]
        ref, gref = run(*ins)
        ref, gref = ref.detach(), gref.detach()
        # run() backpropagates the drawn g only from a 'none' loss; a scalar loss gets gradient 1
        g64 = ins[-1] if ref.dim() else torch.ones((), dtype=torch.float64)
        u = u_chain(dt) * (4 if dt == torch.float64 else 1)
        eta = torch.finfo(dt).smallest_normal * torch.finfo(dt).eps  # a step's underflow, absolute
        big = torch.finfo(dt).max
        # magnitudes for the range guards: NaN inputs give NaN (their outputs are checked to be NaN)
        # and must not switch a guard off, so the guards read them as 0
        a_abs = torch.nan_to_num(a64.abs(), nan=0.0)
        if name in ("nll2d", "cross_entropy"):
            tt, ww = ins[1], (ins[2] if ins[2] is not None else torch.ones(c, dtype=torch.float64))
            C = a64.shape[1]
            npos = max(math.prod(tshape), 1)
            if name == "nll2d":
                r = ww.amax() * a64.abs().amax(1) if C else torch.zeros(tshape, dtype=torch.float64)
                lse = torch.zeros_like(r)
            else:
                lse = torch.logsumexp(a64, 1).abs()
                r = ww.amax() * (2 * a64.abs().amax(1) + lse + 1) * (C if probs or smoothing else 1)
            if reduction == "mean" and not probs:
                valid = tt != ignore
                D = torch.where(valid, ww[tt.clamp(0, C - 1)], 0.0).sum()
            elif reduction == "mean":
                D = torch.tensor(float(npos if a64.dim() > 1 else 1))
                D = torch.tensor(float(a64.shape[0] * math.prod(spatial))) if a64.numel() else D
            else:
                D = torch.tensor(1.0)
            if reduction == "none":
                tol = (C + 16) * u * r
            else:
                tol = (npos + C + 16) * u * r.sum() / D + (npos + 4) * u * ref.abs()
            # the gradient: w·(softmax − target)·g/D per element (nll: w·g/D at the target)
            # softmax = exp(log_softmax), whose absolute error (C+4)·u·(|x|+|m|+|lse|+1)
            # (test_softmax_log_softmax_and_backward) is a relative error of the softmax term
            rowscale = (2 * a64.abs().amax(1, keepdim=True) + torch.logsumexp(a64, 1, keepdim=True).abs() + 2) \
                if a64.numel() else 1.0
            gmag = ((g64.abs().unsqueeze(1) if reduction == "none" else g64.abs()) * ww.amax() * (1 + smoothing) * 2
                    * rowscale)
            gtol = (npos + C + 16) * u * (gref.abs() + gmag / (D if reduction == "mean" else 1.0))
            lse_abs = torch.nan_to_num(lse, nan=0.0)
            over = 2 * (a_abs.amax() + lse_abs.amax() if lse.numel() else a_abs.amax()) * (C + 1) * ww.amax() >= big \
                if a64.numel() else False
            if reduction == "mean" and a64.numel():
                # torch's order divides the smoothing (or probability) sum by D before scaling by ε/C
                over = over | (2 * torch.nan_to_num(r, nan=0.0).sum() / D >= big)
            if bool(over):  # an intermediate (log_softmax, the weighted terms' sum) beyond the range
                tol = torch.full_like(torch.as_tensor(tol), math.inf)
            nops = npos + C + 16
            mag = gmag = None
        else:
            t64 = ins[1]
            n = max(a64.numel(), 1)
            D = {"none": 1, "sum": 1, "mean": n, "batchmean": a64.shape[0] if a64.dim() else 1}[red]
            t_abs = torch.nan_to_num(t64.abs(), nan=0.0)
            under = torch.zeros_like(a64)  # absolute error of an intermediate that underflows in dt
            if name == "l1":
                r = a_abs + t_abs
                # docs/semantics.md, Elementwise: repmode's sign(NaN) is NaN (torch's CPU kernel
                # gives 0), so the gradient g·sign(a − t) is NaN where a − t is
                gref = torch.where(torch.isnan(a64 - t64), math.nan, gref)
                gscale = torch.ones_like(a64)
                mag = 2 * r
            elif log_target:
                # exp(t)·(t − a), each step rounded to dt: exp(t) may underflow (η, times |t − a|)
                # or overflow, t − a may overflow (then ±inf, or 0·inf = NaN where exp(t) is 0)
                r = t64.exp() * (t_abs + a_abs + 1)
                gscale = t64.exp()
                under = eta * (t_abs + a_abs + 1)
                mag = torch.maximum(2 * r, torch.maximum(t_abs + a_abs, t64.exp()))
            else:
                r = t64 * (t64.log().abs() + a_abs + 1)
                gscale = t64
                mag = 2 * r
            if red == "none":
                tol = 16 * u * r + under
            else:
                tol = (n + 16) * u * r.sum() / max(D, 1) + under.sum() / max(D, 1) + (n + 4) * u * ref.abs()
                mag = mag.sum() if mag.numel() else torch.tensor(0.0, dtype=torch.float64)
            gtol = (16 + 4) * u * (gref.abs() + g64.abs() * gscale / max(D, 1))
            if log_target:  # exp(t) underflowing in dt
                gtol = gtol + eta * g64.abs() / max(D, 1)
            # the gradient −exp(t)·g (or −t·g, sign·g) divides by D last: exp(t) itself may overflow
            gmag = gscale * torch.clamp(g64.abs(), min=1.0)
            nops = n + 16
        assert_within(out[0], ref, torch.as_tensor(tol, dtype=torch.float64), f"{name} {reduction}", mag=mag, nops=nops)
        assert_within(out[1], gref, gtol, f"{name} {reduction} backward", mag=gmag, nops=nops)
    check(run, *args, bound=bound)


# ----------------------------------------------------------------------------- attention

def _sdpa_reference(q, k, v, mask, causal, scale):
    """docs/semantics.md "Attention" in float64: (q·c)(k·c)ᵀ with c = sqrt(|scale|) (q·(−c) for a
    negative scale), causal then attn_mask added, _safe_softmax, then ·v. Returns (out, s, P)."""
    E = q.shape[-1]
    sc = 1.0 / math.sqrt(E) if scale is None else scale
    c = math.sqrt(abs(sc))
    s = (q * (c if sc > 0 else -c)) @ (k * c).transpose(-2, -1)
    L, S = s.shape[-2:]
    if causal:
        s = s + torch.zeros(L, S, dtype=s.dtype).masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -math.inf)
    if mask is not None:
        s = s + (torch.zeros(mask.shape, dtype=s.dtype).masked_fill(~mask, -math.inf) if mask.dtype == torch.bool
                 else mask)
    p = aten._safe_softmax(s, -1)
    return p @ v, s, p


def _sdpa_forward_tolerance(q, k, v, mask, scale, dt, dq=None, dk=None, dv=None):
    """First-order bound on |out − out_ref| for the order of docs/semantics.md "Attention" in a
    dtype of unit roundoff u, inputs q, k, v (float64, the exact values) known to ±dq, ±dk, ±dv.

    s_ij: the scalings (2 roundings) and the chain of E products, ≤ (E+2)·u·|c|²Σ|q||k|, plus the
    mask addition (u·|s+mask|) and the input errors |c|²(Σ|dq||k| + |q||dk|): δs ≤ (E+4)·u·mag + ….
    A perturbation of the row by at most Δ_i = max_j δs_ij (over the unmasked j) moves
    P_ij = exp(s_ij − m)/Σ by a factor within e^{±2Δ_i}; softmax's own rounding adds
    u·(|s_ij − m_i| + S + 4)·P_ij (test_softmax_log_softmax_and_backward). out_i = Σ_j P_ij v_j, a
    chain of S products: (S+2)·u·Σ_j P_ij|v_j| + Σ_j |δP_ij||v_j| + Σ_j P_ij|dv_j|.
    Returns (tolerance of out, relative bound ρ of P, P_ref, mag of the scores)."""
    E = q.shape[-1]
    sc = 1.0 / math.sqrt(E) if scale is None else scale
    u = u_of(dt) * (2 if dt == torch.float64 else 1)
    eta = torch.finfo(dt).smallest_normal * torch.finfo(dt).eps
    aq, ak = q.abs(), k.abs()
    mag = abs(sc) * (aq @ ak.transpose(-2, -1))
    if mask is not None and mask.dtype != torch.bool:
        mag = mag + torch.where(torch.isfinite(mask), mask.abs(), 0.0)
    ds = (E + 4) * u * mag + eta * (ak.sum(-1).unsqueeze(-2) + aq.sum(-1, keepdim=True) + E + 2)
    # the scores may overflow, or already q·c or k·c: no bound there (also where masked: an
    # overflowing score plus the mask's −inf is NaN)
    c = math.sqrt(abs(sc))
    big = torch.finfo(dt).max
    over = ((E + 4) * mag >= big) | (c * aq.amax(-1, keepdim=True) >= big) | (c * ak.amax(-1).unsqueeze(-2) >= big)
    ds = torch.where(over, math.inf, ds)
    mag = torch.where(over, math.inf, mag)
    if dq is not None:
        ds = ds + abs(sc) * (dq @ ak.transpose(-2, -1) + aq @ dk.transpose(-2, -1))
    _, s, p = _sdpa_reference(q, k, v, mask, False, scale)
    return ds, s, p, mag


@given(data=st.data())
def test_scaled_dot_product_attention(data):
    """F.scaled_dot_product_attention forward and backward (q, k, v (B, H, L, E) / (B, H, S, E),
    bool or float attn_mask, is_causal, scale, dropout 0), against the float64 math formula of
    docs/semantics.md "Attention".

    Forward: see _sdpa_forward_tolerance (δs the score error, Δ_i its row max, P within a factor
    e^{±2Δ_i} plus softmax's u·(|s−m|+S+4)·P, then the chain with v). Backward (the documented
    sequence): dV_j = Σ_i P_ij g_i (chain over L), dP = g·vᵀ (chain over Ev, (Ev+1)·u·A with
    A = |g|·|v|ᵀ), dS = P∘(dP − Σ_k P_k dP_k) (softmax backward): with M_ij = A_ij + Σ_k P_ik A_ik,
    |δdS_ij| ≤ P_ij·(3ρ_i + (S+Ev+8)·u)·M_ij, ρ_i = e^{2Δ_i} − 1 + u·(max|s−m| + S + 4);
    dq = c·dS·k', dk = c·dSᵀ·q' (chains of S resp. L) add (S+4)·u resp. (L+4)·u times
    c·(P∘M)·|k| resp. c·(P∘M)ᵀ·|q|, and k' = round(k·c), q' = round(q·c) may underflow (η/2 each,
    times |dS|), and so may P_ij (η, times M_ij + Σ_k A_ik in dS). Where the scores' magnitude,
    g·vᵀ's or the chains dS·k', dSᵀ·q' leave the dtype's range (an intermediate may overflow)
    there is no bound."""
    dt = data.draw(st.sampled_from(dtypes_of(aten._scaled_dot_product_flash_attention_for_cpu.default)))
    B, H = data.draw(st.integers(0, 2)), data.draw(st.integers(1, 2))
    L, S = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4))
    E, Ev = data.draw(st.integers(1, 4)), data.draw(st.sampled_from([None, 1, 3]))
    Ev = E if Ev is None else Ev
    scales = (1.0, 3.0, 1e-3)
    q = data.draw(tensors(dt, shape=(B, H, L, E), scales=scales))
    k = data.draw(tensors(dt, shape=(B, H, S, E), scales=scales))
    v = data.draw(tensors(dt, shape=(B, H, S, Ev), scales=scales))
    g = data.draw(tensors(dt, shape=(B, H, L, Ev), specials=False))
    kind = data.draw(st.sampled_from(["none", "causal", "bool", "float"]))
    mshape = data.draw(st.sampled_from([(L, S), (B, 1, L, S), (1, H, 1, S)]))
    mask = None
    if kind == "bool":
        seed = data.draw(st.integers(0, 999))
        mask = torch.rand(mshape, generator=torch.Generator().manual_seed(seed)) < 0.7
    elif kind == "float":
        mask = data.draw(tensors(dt, shape=mshape))
    scale = data.draw(st.sampled_from([None, 0.3, 2.0, -0.5]))
    causal = kind == "causal"

    def run(qq, kk, vv, gg, mm):
        qq, kk, vv = (t.detach().requires_grad_(True) for t in (qq, kk, vv))
        out = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=mm, dropout_p=0.0, is_causal=causal, scale=scale)
        return (out,) + torch.autograd.grad(out, (qq, kk, vv), gg)

    def bound(inp, out):
        q64, k64, v64, g64, m64 = f64(*inp)
        qr, kr, vr = (t.detach().requires_grad_(True) for t in (q64, k64, v64))
        cm = None
        if causal:
            cm = torch.ones(L, S, dtype=torch.bool).tril()
        ref_out, _, _ = _sdpa_reference(qr, kr, vr, m64, causal, scale)
        if S == 0:
            # an empty key sequence: torch's F.scaled_dot_product_attention returns zeros plus
            # 0·(Σq + Σk + Σv) (NaN if any input holds a NaN or inf; gradients zero), and repmode
            # gives the same (native torch's fused CPU op, called directly, dies of SIGFPE there)
            ref_out = torch.zeros_like(ref_out) + 0 * (q64.sum() + k64.sum() + v64.sum())
        if ref_out.numel() and S:
            grads = torch.autograd.grad(ref_out, (qr, kr, vr), g64, allow_unused=True)
            grads = [torch.zeros_like(t) if gr is None else gr for gr, t in zip(grads, (q64, k64, v64))]
        else:
            grads = [torch.zeros_like(t) for t in (q64, k64, v64)]
        ds, s, p, mag = _sdpa_forward_tolerance(q64, k64, v64, cm if causal else m64, scale, dt)
        s, p = s.detach(), p.detach()
        u = u_of(dt) * (2 if dt == torch.float64 else 1)
        uc = u_chain(dt) * (2 if dt == torch.float64 else 1)
        eta = torch.finfo(dt).smallest_normal * torch.finfo(dt).eps
        live = torch.isfinite(s)
        delta = (torch.where(live | torch.isinf(ds), ds, 0.0).amax(-1, keepdim=True) if S
                 else torch.zeros(s.shape[:-1] + (1,), dtype=torch.float64))
        m = torch.where(live, s, -math.inf).amax(-1, keepdim=True) if S else delta
        spread = torch.where(live, (s - m).abs(), 0.0).amax(-1, keepdim=True) if S else delta
        rho = torch.expm1(2 * delta) + u * (spread + S + 4)
        av = v64.abs()
        tol = (S + 2) * u * (p @ av) + (rho * p) @ av + eta * (av.sum(-2, keepdim=True) + 1)
        # no bound where a score's magnitude (or an output chain's) may leave the dtype's range
        if S:
            rowmag = torch.where(live | torch.isinf(ds), mag, 0.0).amax(-1, keepdim=True)
        else:  # the sums Σq, Σk, Σv of the empty-key rule may overflow in the dtype: then NaN too
            tot = q64.abs().sum() + k64.abs().sum() + v64.abs().sum()
            rowmag = torch.full_like(delta, math.inf if bool(tot >= torch.finfo(dt).max) else 0.0)
        big = torch.finfo(dt).max
        rowmag = torch.where(rowmag * (E + 4) >= big, math.inf, rowmag)
        assert_within(out[0], ref_out.detach(), tol, "sdpa forward", mag=rowmag.expand(ref_out.shape), nops=E + S + 8)
        sc = 1.0 / math.sqrt(E) if scale is None else scale
        A = g64.abs() @ av.transpose(-2, -1)
        M = A + (p * A).sum(-1, keepdim=True)
        PM = p * M
        # P_ij may underflow (an absolute error up to η, outside ρ's relative bound), which
        # dS = P∘(dP − Σ P·dP) carries times M_ij and, through the sum, Σ_k A_ik
        dS_tol = p * (3 * rho + (S + Ev + 8) * uc) * M + 2 * eta * (M + A.sum(-1, keepdim=True))
        ak, aq, ag = k64.abs(), q64.abs(), g64.abs()
        # k' = round(k·c) and q' = round(q·c) may underflow: an absolute error of up to η/2 each,
        # which dq = (dS·k')·c and dk = (dSᵀ·q')·c carry times |dS| ≤ P∘M + dS_tol
        dS_abs = PM + dS_tol
        c = math.sqrt(abs(sc))
        tq = (abs(sc) * ((dS_tol + (S + 4) * uc * PM) @ ak) + c * eta * dS_abs.sum(-1, keepdim=True)
              + eta * (S + Ev + 8) * (ak.sum(-2, keepdim=True) + 1))
        tk = (abs(sc) * ((dS_tol + (L + 4) * uc * PM).transpose(-2, -1) @ aq) + c * eta * dS_abs.sum(-2).unsqueeze(-1)
              + eta * (L + Ev + 8) * (aq.sum(-2, keepdim=True) + 1))
        tv = ((L + 2) * uc * (p.transpose(-2, -1) @ ag) + (rho * p).transpose(-2, -1) @ ag
              + eta * (L + 2) * (ag.sum(-2, keepdim=True) + 1))
        # no gradient bound for a (batch, head) whose scores or g·vᵀ chain may leave the range (dP
        # overflowing to ±inf makes dS = P∘(dP − Σ P·dP) NaN); a NaN magnitude counts as past it
        head_rm = (rowmag.amax((-2, -1), keepdim=True) if rowmag.numel()
                   else torch.zeros(rowmag.shape[:-2] + (1, 1), dtype=torch.float64))
        head_A = (A.amax((-2, -1), keepdim=True) if A.numel()
                  else torch.zeros(A.shape[:-2] + (1, 1), dtype=torch.float64))
        in_range = (head_A * (S + Ev + 8) < big) & (head_rm * (E + 4) < big)  # False for NaN too
        # and per element, the chains dS·k' and dSᵀ·q' themselves (k' = round(k·c) near the max with
        # the scores still small, say q = 0 there: the exact sum may be 0, a partial sum inf)
        chain = {"dq": dS_abs @ (c * ak), "dk": dS_abs.transpose(-2, -1) @ (c * aq), "dv": torch.zeros_like(grads[2])}
        for i, (what, t, gr) in enumerate((("dq", tq, grads[0]), ("dk", tk, grads[1]), ("dv", tv, grads[2])), 1):
            # (NaN: |dS| unknown, e.g. ρ = inf where the scores are huge and P = 0 masked: no bound)
            chain_mag = torch.nan_to_num(chain[what], nan=math.inf, posinf=math.inf)
            gm = torch.where(in_range, 2 * max(1.0, c) * chain_mag, math.inf)
            assert_within(out[i], gr, t, f"sdpa {what}", mag=gm.expand(gr.shape), nops=S + L + Ev + 16)
    check(run, q, k, v, g, mask, bound=bound)


# ----------------------------------------------------------------------------- attention modules

def _linear_tolerance(x, dx, w, b, u, big=math.inf):
    """y = x·Wᵀ + b as an fma chain of K = in-features products and one bias rounding, on x known
    to ±dx: |δy| ≤ |dx|·|W|ᵀ + (K+2)·u·(|x|·|W|ᵀ + |b|); infinite (no bound) where the chain's
    magnitude |x|·|W|ᵀ + |b| reaches ``big`` (the dtype's max: a partial sum may overflow).
    Returns (y, δy) in float64."""
    y = x @ w.t() + (b if b is not None else 0.0)
    mag = x.abs() @ w.abs().t() + (b.abs() if b is not None else 0.0)
    dy = dx @ w.abs().t() + (w.shape[1] + 2) * u * mag
    return y, torch.where(mag + dx.amax() * w.abs().sum() >= big, math.inf, dy)


def _heads(t, B, L, H):
    return t.reshape(B, L, H, -1).transpose(1, 2)          # (B, H, L, hd)


def _self_attention_tolerance(mha, x, dx, allowed, dt, need_weights):
    """Error bound of nn.MultiheadAttention(x, x, x) (batch-first x (B, L, d), float64 values, known
    to ±dx) in the order of docs/semantics.md "Attention": the in-projection (_linear_tolerance),
    per head the attention bound of _sdpa_forward_tolerance with the projections' errors as input
    errors, the out-projection; and the bound of the head-averaged weights (ρ·P per head, mean
    over H heads: (H+2)·u more). Returns (δout, δweights)."""
    u = u_of(dt) * (2 if dt == torch.float64 else 1)
    eta = torch.finfo(dt).smallest_normal * torch.finfo(dt).eps
    B, L, d = x.shape
    H = mha.num_heads
    W, bias = mha.in_proj_weight.detach().double(), mha.in_proj_bias.detach().double()
    big = torch.finfo(dt).max
    q, dq = _linear_tolerance(x, dx, W[:d], bias[:d], u, big)
    k, dk = _linear_tolerance(x, dx, W[d:2 * d], bias[d:2 * d], u, big)
    v, dv = _linear_tolerance(x, dx, W[2 * d:], bias[2 * d:], u, big)
    q, dq, k, dk, v, dv = (_heads(t, B, L, H) for t in (q, dq, k, dk, v, dv))
    ds, s, p, mag = _sdpa_forward_tolerance(q, k, v, allowed, None, dt, dq, dk, dv)
    live = torch.isfinite(s)
    delta = torch.where(live | torch.isinf(ds), ds, 0.0).amax(-1, keepdim=True)
    m = torch.where(live, s, -math.inf).amax(-1, keepdim=True)
    spread = torch.where(live, (s - m).abs(), 0.0).amax(-1, keepdim=True)
    rho = torch.expm1(2 * delta) + u * (spread + L + 4)
    av = v.abs()
    do = (L + 2) * u * (p @ av) + (rho * p) @ av + ((1 + rho) * p) @ dv + eta * (av.sum(-2, keepdim=True) + 1)
    o = (p @ v).transpose(1, 2).reshape(B, L, d)
    do = do.transpose(1, 2).reshape(B, L, d)
    wo, bo = mha.out_proj.weight.detach().double(), mha.out_proj.bias.detach().double()
    _, dy = _linear_tolerance(o, do, wo, bo, u, big)
    dw = ((rho * p).mean(1) + (H + 2) * u * p.mean(1)) if need_weights else None
    return dy, dw


def _layer_norm_tolerance(x, dx, ln, u, big):
    """LayerNorm over the last dim (n values) of x known to ±dx: the rounding bound of test_norms,
    (2n+16)·u·κ·(|ŷ|+1)·|w| + 2u·|y|, plus the first-order propagation of dx:
    ∂ŷ_i = (δx_i − mean δx)/σ − ŷ_i·mean(ŷ·δx)/σ, so |∂ŷ_i| ≤ (|δx_i| + (1 + |ŷ_i|)·max|δx|)/σ
    (mean|ŷ| ≤ 1), σ = sqrt(var + eps); times |w|. Returns (y, δy) in float64."""
    w, b = ln.weight.detach().double(), ln.bias.detach().double()
    n = x.shape[-1]
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    sig = (var + ln.eps).sqrt()
    yhat = (x - mu) / sig
    y = yhat * w + b
    kap = ((x.abs() + mu.abs()) ** 2).sum(-1, keepdim=True) / (((x - mu) ** 2).sum(-1, keepdim=True) + ln.eps)
    rnd = (2 * n + 16) * u * kap * (yhat.abs() + 1) * w.abs() + 2 * u * (y.abs() + b.abs())
    prop = (dx + (1 + yhat.abs()) * dx.amax(-1, keepdim=True)) / sig * w.abs()
    # the squared deviations may overflow the dtype (test_norms): no bound for such a row
    over = n * (2 * (x.abs() + dx).amax(-1, keepdim=True)) ** 2 >= big
    return y, torch.where(over, math.inf, rnd + prop)


@given(data=st.data())
def test_multi_head_attention_and_encoder_layer(data):
    """nn.MultiheadAttention (self-attention; batch_first either way; need_weights on/off;
    key_padding_mask) and nn.TransformerEncoderLayer (norm_first either way, relu/gelu, optional
    src_key_padding_mask), in eval mode under torch.no_grad() (torch's fast paths
    _native_multi_head_attention / _transformer_encoder_layer_fwd where it takes them), against
    the same module in float64 run on its slow path.

    Bounds: first-order propagation of the rounding errors through the documented sequence —
    _linear_tolerance for each projection, _self_attention_tolerance for the attention, one
    rounding u·|x + y| per residual add, _layer_norm_tolerance for each LayerNorm, the
    activation 1-Lipschitz (relu) or ≤ 1.13-Lipschitz (gelu) plus its own 2u·|act|. The
    second-order terms (products of two O(u) errors) are covered by doubling the bound."""
    dt = data.draw(st.sampled_from(dtypes_of(aten._native_multi_head_attention.default)))
    which = data.draw(st.sampled_from(["mha", "encoder"]))
    H, hd = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3))
    d = H * hd
    B, L = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 4))
    batch_first = data.draw(st.booleans()) if which == "mha" else True
    torch.manual_seed(data.draw(st.integers(0, 2**16)))
    if which == "mha":
        mod = torch.nn.MultiheadAttention(d, H, batch_first=batch_first, dtype=dt)
        need_weights = data.draw(st.booleans())
    else:
        ffn = data.draw(st.integers(1, 4))
        act = data.draw(st.sampled_from(["relu", "gelu"]))
        norm_first = data.draw(st.booleans())
        mod = torch.nn.TransformerEncoderLayer(d, H, ffn, dropout=0.0, activation=act, batch_first=True,
                                               norm_first=norm_first, dtype=dt)
        need_weights = False
    with torch.no_grad():
        for prm in mod.parameters():  # random biases and LayerNorm affine too (init gives 0 / 1)
            prm.copy_(torch.randn(prm.shape, dtype=torch.float64).to(dt))
    mod.eval()
    x = data.draw(tensors(dt, shape=(B, L, d) if batch_first else (L, B, d), specials=data.draw(st.booleans()),
                          scales=(1.0, 3.0)))
    kpm = None
    if data.draw(st.booleans()):
        kpm = torch.rand(B, L, generator=torch.Generator().manual_seed(data.draw(st.integers(0, 999)))) < 0.3
        kpm[:, 0] = False  # at least one key per row (a fully masked row is NaN or 0 by the path taken)
    ref_mod = __import__("copy").deepcopy(mod).double()

    def fn(xx, mask):
        with torch.no_grad():
            if which == "mha":
                return mod(xx, xx, xx, key_padding_mask=mask, need_weights=need_weights)
            return mod(xx, src_key_padding_mask=mask)

    def bound(inp, out):
        x64 = inp[0].double()
        with torch.enable_grad():  # the slow path (fast paths need no_grad)
            if which == "mha":
                ref = ref_mod(x64, x64, x64, key_padding_mask=inp[1], need_weights=need_weights)
            else:
                ref = (ref_mod(x64, src_key_padding_mask=inp[1]),)
        xb = x64 if batch_first else x64.transpose(0, 1)
        allowed = None if inp[1] is None else (~inp[1]).reshape(B, 1, 1, L)
        u = u_of(dt) * (2 if dt == torch.float64 else 1)
        zero = torch.zeros_like(xb)
        big = torch.finfo(dt).max
        if which == "mha":
            dy, dw = _self_attention_tolerance(mod, xb, zero, allowed, dt, need_weights)
            tols = [dy if batch_first else dy.transpose(0, 1), dw]
        else:
            lin1, lin2 = mod.linear1, mod.linear2
            to64 = lambda lin: (lin.weight.detach().double(), lin.bias.detach().double())  # noqa: E731

            def sa(z, dz):
                with torch.enable_grad():
                    y = ref_mod.self_attn(z, z, z, key_padding_mask=inp[1], need_weights=False)[0].detach()
                return y, _self_attention_tolerance(mod.self_attn, z, dz, allowed, dt, False)[0]

            def ff(z, dz):
                h, dh = _linear_tolerance(z, dz, *to64(lin1), u, big)
                a = torch.relu(h) if act == "relu" else F.gelu(h)
                da = (1.0 if act == "relu" else 1.13) * dh + 2 * u * a.abs()
                return _linear_tolerance(a, da, *to64(lin2), u, big)

            def add(a, da, b, db):
                s_ = a + b
                return s_, torch.where(a.abs() + b.abs() + da + db >= big, math.inf, da + db + u * s_.abs())
            if norm_first:
                z, dz = _layer_norm_tolerance(xb, zero, mod.norm1, u, big)
                x1, dx1 = add(xb, zero, *sa(z, dz))
                z, dz = _layer_norm_tolerance(x1, dx1, mod.norm2, u, big)
                y, dy = add(x1, dx1, *ff(z, dz))
            else:
                x1, dx1 = _layer_norm_tolerance(*add(xb, zero, *sa(xb, zero)), mod.norm1, u, big)
                y, dy = _layer_norm_tolerance(*add(x1, dx1, *ff(x1, dx1)), mod.norm2, u, big)
            tols = [dy]
        for i, (r, t) in enumerate(zip(ref, tols)):
            if r is None:
                continue
            # an intermediate beyond the dtype's range (scores, projections): no bound there
            mag = torch.where(torch.isfinite(t), 0.0, math.inf)
            assert_within(out[i], r.detach(), 2 * t, f"{which} out[{i}]", mag=mag.broadcast_to(r.shape),
                          nops=4 * d + 4 * L + 32)
    check(fn, x, kpm, bound=bound, stride_class=False)


# ----------------------------------------------------------------------------- recurrent layers

def _rnn_direction_tolerance(kind, nonlin, x, dx, p, u, eta, reverse, big, h0, c0):
    """Float64 outputs of one layer and direction of nn.LSTM/GRU/RNN (initial state h0, c0) on
    x (T, B, I) known to ±dx, with a first-order bound of each step's rounding and propagated
    error (the order of docs/semantics.md "Recurrent layers" / torch's decomposed cells):
    - A = x·W_ihᵀ + b_ih, R = h·W_hhᵀ + b_hh: _linear_tolerance (inputs ±dx, ±dh);
    - sigmoid / tanh: 1/4- / 1-Lipschitz, plus their own 2u·|value| + η; relu exact, 1-Lipschitz;
    - LSTM: gates = round(A + R); c' = round(round(f·c) + round(i·g)) (three roundings),
      h' = round(o·tanh(c'));
    - GRU: r, z = σ(A + R), n = tanh(A_n + r·R_n), h' = (1−z)·n + z·h in torch's form (≤ 3
      roundings of magnitude ≤ |n| + |z|·(|h| + |n|)).
    Returns (outputs (T, B, H), their bounds, last h, its bound, last c, its bound)."""
    w_ih, w_hh, b_ih, b_hh = p
    Hs = w_hh.shape[1]
    T, B = x.shape[:2]
    h, c = h0, c0
    dh, dc = torch.zeros_like(h), torch.zeros_like(h)
    outs, douts = [None] * T, [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        A, dA = _linear_tolerance(x[t], dx[t], w_ih, b_ih, u, big)
        R, dR = _linear_tolerance(h, dh, w_hh, b_hh, u, big)
        if kind == "LSTM":
            gts = A + R
            dg = dA + dR + u * gts.abs()
            gi, gf, gg, go = gts.chunk(4, 1)
            di_, df_, dg_, do_ = dg.chunk(4, 1)
            i, f, o = torch.sigmoid(gi), torch.sigmoid(gf), torch.sigmoid(go)
            g = torch.tanh(gg)
            di = 0.25 * di_ + 2 * u * i + eta
            df = 0.25 * df_ + 2 * u * f + eta
            do = 0.25 * do_ + 2 * u * o + eta
            dgg = dg_ + 2 * u * g.abs() + eta
            c_new = f * c + i * g
            dc = f * dc + c.abs() * df + i * dgg + g.abs() * di + 3 * u * ((f * c).abs() + (i * g).abs()) + 3 * eta
            c = c_new
            tc = torch.tanh(c)
            dtc = dc + 2 * u * tc.abs() + eta
            h = o * tc
            dh = o * dtc + tc.abs() * do + u * h.abs() + eta
        elif kind == "GRU":
            Ar, Az, An = A.chunk(3, 1)
            Rr, Rz, Rn = R.chunk(3, 1)
            dAr, dAz, dAn = dA.chunk(3, 1)
            dRr, dRz, dRn = dR.chunk(3, 1)
            r, z = torch.sigmoid(Ar + Rr), torch.sigmoid(Az + Rz)
            dr = 0.25 * (dAr + dRr + u * (Ar + Rr).abs()) + 2 * u * r + eta
            dz = 0.25 * (dAz + dRz + u * (Az + Rz).abs()) + 2 * u * z + eta
            pre = An + r * Rn
            n = torch.tanh(pre)
            dn = dAn + r * dRn + Rn.abs() * dr + 2 * u * (An.abs() + (r * Rn).abs()) + 2 * eta
            dn = dn + 2 * u * n.abs() + eta
            h_new = (1 - z) * n + z * h
            dh = (1 - z) * dn + z * dh + (h - n).abs() * dz + 3 * u * (n.abs() + z * (h.abs() + n.abs())) + 3 * eta
            h = h_new
        else:
            pre = A + R
            dpre = dA + dR + u * pre.abs() + eta
            if nonlin == "relu":  # A + R may overflow the dtype: relu passes inf on (tanh saturates)
                dpre = torch.where(A.abs() + R.abs() + dA + dR >= big, math.inf, dpre)
            h = torch.tanh(pre) if nonlin == "tanh" else torch.relu(pre)
            dh = dpre + (2 * u * h.abs() + eta if nonlin == "tanh" else 0.0)
        outs[t], douts[t] = h, dh
    return torch.stack(outs) if T else x.new_zeros(0, B, Hs), torch.stack(douts) if T else x.new_zeros(0, B, Hs), \
        h, dh, c, dc


@given(data=st.data())
def test_recurrent_layers(data):
    """nn.LSTM / nn.GRU / nn.RNN (tanh, relu): 1-2 layers, bidirectional or not, batch_first either
    way, forward (output, h_n, c_n) and backward (the input's and every parameter's gradient).

    Forward bound: _rnn_direction_tolerance, layer by layer (a layer's input error is the layer
    below's output bound, both directions concatenated), doubled for second-order terms; where a
    bound leaves the dtype's range an intermediate may overflow: no bound.

    Backward (b): no error bound of BPTT is derived here. float32 nn.LSTM reaches repmode's own
    mkldnn_rnn_layer(_backward) composites, and their output and every gradient must equal, bit
    for bit, the documented step order re-stated one op at a time (tests/support/recurrent_reference.py,
    each op repmode's, held to its bound by its own family). float64 LSTM, GRU and RNN run torch's
    decomposed cells, so their gradients are autograd's formulas over registered ops, each
    property-tested; tests/families/recurrent/test_recurrent.py compares all gradients with float64 autograd."""
    kind = data.draw(st.sampled_from(["LSTM", "GRU", "RNN_tanh", "RNN_relu"]))
    dt = data.draw(st.sampled_from(dtypes_of(aten.mkldnn_rnn_layer.default)))
    I, Hs = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    layers, bidir = data.draw(st.integers(1, 2)), data.draw(st.booleans())
    batch_first = data.draw(st.booleans())
    T, B = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 2))
    torch.manual_seed(data.draw(st.integers(0, 2**16)))
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}.get(kind, torch.nn.RNN)
    kw = {"nonlinearity": kind[4:]} if kind.startswith("RNN") else {}
    mod = cls(I, Hs, layers, bidirectional=bidir, batch_first=batch_first, dtype=dt, **kw)
    x = data.draw(tensors(dt, shape=(B, T, I) if batch_first else (T, B, I), specials=data.draw(st.booleans()),
                          scales=(1.0, 3.0)))
    out_shape = (B, T, (2 if bidir else 1) * Hs) if batch_first else (T, B, (2 if bidir else 1) * Hs)
    g = data.draw(tensors(dt, shape=out_shape, specials=False))
    nd = layers * (2 if bidir else 1)
    h0 = c0 = None
    if data.draw(st.booleans()):  # a given initial state (else zeros)
        h0 = data.draw(tensors(dt, shape=(nd, B, Hs), specials=False))
        c0 = data.draw(tensors(dt, shape=(nd, B, Hs), specials=False)) if kind == "LSTM" else None

    def run(xx, gg, hh, cc):
        xx = xx.detach().requires_grad_(True)
        res = mod(xx) if hh is None else mod(xx, (hh, cc) if kind == "LSTM" else hh)
        out = res[0]
        states = res[1] if isinstance(res[1], tuple) else (res[1],)
        grads = torch.autograd.grad(out, [xx] + list(mod.parameters()), gg)
        return (out,) + states + grads

    def bound(inp, got):
        x64 = inp[0].double()
        xs = x64 if not batch_first else x64.transpose(0, 1)
        u = u_of(dt) * (2 if dt == torch.float64 else 1)
        eta = torch.finfo(dt).smallest_normal * torch.finfo(dt).eps
        prm = dict((n, q.detach().double()) for n, q in mod.named_parameters())
        layer_in, dlayer_in = xs, torch.zeros_like(xs)
        hn, dhn, cn, dcn = [], [], [], []
        h0s = torch.zeros(nd, B, Hs, dtype=torch.float64) if inp[2] is None else inp[2].double()
        c0s = torch.zeros(nd, B, Hs, dtype=torch.float64) if inp[3] is None else inp[3].double()
        for layer in range(layers):
            outs, douts = [], []
            for rev in ([False, True] if bidir else [False]):
                j = layer * (2 if bidir else 1) + int(rev)
                sfx = f"_l{layer}" + ("_reverse" if rev else "")
                p = [prm[f"weight_ih{sfx}"], prm[f"weight_hh{sfx}"], prm[f"bias_ih{sfx}"], prm[f"bias_hh{sfx}"]]
                o, do, h, dh, c, dc = _rnn_direction_tolerance(kind[:4].rstrip("_"), kind[4:], layer_in, dlayer_in,
                                                               p, u, eta, rev, torch.finfo(dt).max, h0s[j], c0s[j])
                outs.append(o), douts.append(do), hn.append(h), dhn.append(dh), cn.append(c), dcn.append(dc)
            layer_in, dlayer_in = torch.cat(outs, -1), torch.cat(douts, -1)
        ref_mod = __import__("copy").deepcopy(mod).double()  # the same parameters in float64
        with torch.no_grad():
            r = ref_mod(x64) if inp[2] is None else ref_mod(x64, (h0s, c0s) if kind == "LSTM" else h0s)
        r_states = r[1] if isinstance(r[1], tuple) else (r[1],)
        assert torch.allclose(torch.nan_to_num(r[0] if batch_first else r[0]), torch.nan_to_num(
            layer_in.transpose(0, 1) if batch_first else layer_in), rtol=1e-9, atol=1e-12), "restated float64 cell"
        tols = [dlayer_in.transpose(0, 1) if batch_first else dlayer_in, torch.stack(dhn)]
        refs = [r[0], r_states[0]]
        if kind == "LSTM":
            tols.append(torch.stack(dcn))
            refs.append(r_states[1])
        for i, (rr, t) in enumerate(zip(refs, tols)):
            mag = torch.where(torch.isfinite(t), 0.0, math.inf)
            assert_within(got[i], rr, 2 * t, f"{kind} out[{i}]", mag=mag, nops=8 * (I + Hs) * T * layers + 32)
        if kind == "LSTM" and dt == torch.float32:  # repmode's composites: the re-stated order, bit for bit
            with num_threads(1), repmode.enabled(strict=True):
                y_ref, grads_ref = restated_lstm(mod, inp[0], inp[2], inp[3], inp[1])
            assert_bitwise_equal(got[0], y_ref, "LSTM output vs the re-stated step order")
            for k, (gg, gr) in enumerate(zip(got[3:], grads_ref)):
                assert_bitwise_equal(gg, gr, f"LSTM gradient {k} vs the re-stated BPTT")
            hypothesis.event("float32 LSTM: equal to the re-stated order")
    check(run, x, g, h0, c0, bound=bound)
