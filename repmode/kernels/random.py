"""Random ops on repmode's counter-based stream (repmode/rng.py, csrc/common/random.h).

Every op draws its elements in the tensor's logical row-major order, whatever its strides:
element i of an op reads the i-th slot of the op's blocks, so a tensor's values depend on the
op's key (one draw from torch's CPU generator, repmode/rng.py) and on its own shape and arguments only. Float formulas
are in docs/semantics.md ("Random numbers"); bf16/fp16 tensors draw float32 values and round
them once.
"""
from __future__ import annotations

import math

import torch

from .. import _ext, rng
from ..errors import layout_name
from ..registry import overloads_named, register_kernel, register_out_forms
from ._common import (
    DTYPE_CODE,
    FLOAT_HALF_INT,
    FLOAT_WIDENED,
    FLOAT_WIDENED_INT,
    LOW_PRECISION,
    call_registered,
    check_device,
    check_float_half_int,
    check_kernel_device,
    kernels_for,
    launch_arg,
    round_to,
    unsupported,
)
from .reduction import cumulative_rows

aten = torch.ops.aten
Tensor = torch.Tensor

# Distribution codes defined in csrc/common/random.h (REPMODE_RANDOM_DISTS).
UNIFORM, NORMAL, EXPONENTIAL, GEOMETRIC, LOG_NORMAL, CAUCHY = (_ext.codes("RandomDist")[n] for n in (
    "UNIFORM", "NORMAL", "EXPONENTIAL", "GEOMETRIC", "LOG_NORMAL", "CAUCHY"))


def _draw(dist: int, shape, dtype: torch.dtype, p0: float, p1: float, generator=None, device=None) -> Tensor:
    """A new contiguous tensor of ``dist`` draws (float dtypes only) on ``device`` (default the CPU): the
    same values on every device, element i keyed by (key, i) only."""
    work = torch.float32 if dtype in LOW_PRECISION else dtype
    if work not in DTYPE_CODE:
        raise TypeError(f"repmode: {dtype} is not a floating dtype for this distribution")
    out = torch.empty(shape, dtype=work, device=device)
    n = out.numel()
    per = 4 if (dist == UNIFORM and work == torch.float32) else 2  # elements_per_block in C++
    blocks = -(-n // per)
    seed, offset = rng.take(blocks, generator)
    if n:
        used = kernels_for(out).random_fill(dist, DTYPE_CODE[work], out.data_ptr(), n, seed, offset, float(p0),
                                            float(p1), launch_arg(out))
        assert used == blocks, "the stream reservation and the C++ fill disagree on the block count"
    if work == dtype:
        return out
    narrow = round_to(out, dtype)
    if dist == UNIFORM and n:
        # rounding once can reach `to` itself (bf16: u >= 1 - 2^-9 rounds to 1.0); the range is
        # [from, to), so those take the largest value of the dtype below `to`
        top = torch.tensor(p1, dtype=dtype, device=out.device)
        reached = narrow >= top
        if bool(reached.any()):
            narrow.masked_fill_(reached, torch.nextafter(top, torch.full_like(top, -math.inf)).item())
    return narrow


def _ints(shape, lo: int, span: int, generator=None, device=None) -> Tensor:
    """int64 draws in [lo, lo + span) (span 2^64: every 64-bit pattern) on ``device`` (default the CPU)."""
    out = torch.empty(shape, dtype=torch.int64, device=device)
    n = out.numel()
    seed, offset = rng.take(-(-n // 2), generator)
    if n:
        kernels_for(out).random_ints(out.data_ptr(), n, seed, offset, int(lo), int(span) & ((1 << 64) - 1),
                                     launch_arg(out))
    return out


def _into(self: Tensor, values: Tensor) -> Tensor:
    """Write draws made in logical order into ``self`` (any strides), in place."""
    self.copy_(values)
    return self


def _like(x: Tensor, kwargs, values: Tensor) -> Tensor:
    """``values`` (drawn in logical order) in the layout native torch gives a ``*_like`` result
    (``memory_format``, default preserve_format: x's strides where x is dense)."""
    out = torch.empty_like(x, dtype=values.dtype, memory_format=kwargs.get("memory_format") or torch.preserve_format)
    return _into(out, values)


def _factory_dtype(kwargs, default=None) -> torch.dtype:
    dtype = kwargs.get("dtype")
    return dtype if dtype is not None else (default or torch.get_default_dtype())


def _factory_device(kwargs) -> torch.device:
    device = kwargs.get("device")
    return torch.device("cpu") if device is None else torch.device(device)


def _check_factory(func, args, kwargs) -> None:
    """A factory's device must have repmode kernels (the CPU, or CUDA when repmode._C_cuda is built)."""
    check_kernel_device(func, args, kwargs, _factory_device(kwargs))
    if kwargs.get("layout") not in (None, torch.strided):
        raise unsupported(func, args, kwargs, "only strided tensors are supported")


def _check_like(func, args, kwargs, x: Tensor) -> None:
    """The tensor whose shape (and dtype) a random op copies: a dense tensor of a claimed dtype on a device
    with kernels."""
    check_device(func, args, kwargs, x)
    kind = layout_name(x)
    if kind is not None:
        raise unsupported(func, args, kwargs, f"only dense strided tensors are supported, not {kind} ones")


# ---------------------------------------------------------------- uniform / normal and friends

@register_kernel(aten.uniform_.default, FLOAT_WIDENED)
def uniform_(func, args, kwargs):
    self, lo, hi = (list(args) + [0.0, 1.0])[:3]
    return _into(self, _draw(UNIFORM, self.shape, self.dtype, lo, hi, kwargs.get("generator"), self.device))


@register_kernel(aten.normal_.default, FLOAT_WIDENED)
def normal_(func, args, kwargs):
    self, mean, std = (list(args) + [0.0, 1.0])[:3]
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _into(self, _draw(NORMAL, self.shape, self.dtype, mean, std, kwargs.get("generator"), self.device))


@register_kernel(aten.exponential_.default, FLOAT_WIDENED)
def exponential_(func, args, kwargs):
    self, lambd = (list(args) + [1.0])[:2]
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _into(self, _draw(EXPONENTIAL, self.shape, self.dtype, lambd, 0.0, kwargs.get("generator"), self.device))


@register_kernel(aten.geometric_.default, FLOAT_WIDENED_INT)
def geometric_(func, args, kwargs):
    self, p = args[0], args[1]
    if not 0 < p <= 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1], but got p={p}")
    work = self.dtype if self.is_floating_point() else torch.float64
    return _into(self, _draw(GEOMETRIC, self.shape, work, p, 0.0, kwargs.get("generator"), self.device))


@register_kernel(aten.log_normal_.default, FLOAT_WIDENED)
def log_normal_(func, args, kwargs):
    self, mean, std = (list(args) + [1.0, 2.0])[:3]
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _into(self, _draw(LOG_NORMAL, self.shape, self.dtype, mean, std, kwargs.get("generator"), self.device))


@register_kernel(aten.cauchy_.default, FLOAT_WIDENED)
def cauchy_(func, args, kwargs):
    self, median, sigma = (list(args) + [0.0, 1.0])[:3]
    return _into(self, _draw(CAUCHY, self.shape, self.dtype, median, sigma, kwargs.get("generator"), self.device))


@register_kernel([aten.rand.default, aten.rand.generator], FLOAT_WIDENED)
def rand(func, args, kwargs):
    _check_factory(func, args, kwargs)
    return _draw(UNIFORM, args[0], _factory_dtype(kwargs), 0.0, 1.0, kwargs.get("generator"), _factory_device(kwargs))


@register_kernel([aten.randn.default, aten.randn.generator], FLOAT_WIDENED)
def randn(func, args, kwargs):
    _check_factory(func, args, kwargs)
    return _draw(NORMAL, args[0], _factory_dtype(kwargs), 0.0, 1.0, kwargs.get("generator"), _factory_device(kwargs))


@register_kernel([aten.rand_like.default, aten.randn_like.default], FLOAT_WIDENED)
def rand_like(func, args, kwargs):
    _check_factory(func, args, kwargs)
    x = args[0]
    _check_like(func, args, kwargs, x)  # the result goes on x's device
    dist = UNIFORM if func is aten.rand_like.default else NORMAL
    values = _draw(dist, x.shape, _factory_dtype(kwargs, x.dtype), 0.0, 1.0, kwargs.get("generator"), x.device)
    return _like(x, kwargs, values)


# ---------------------------------------------------------------- integers and permutations

def _dtype_span(dtype: torch.dtype) -> int:
    """random_()'s default range [0, span) for a dtype (torch: [0, 2^digits] for floats)."""
    if dtype.is_floating_point:
        digits = {torch.float32: 24, torch.float64: 53, torch.float16: 11, torch.bfloat16: 8}[dtype]
        return (1 << digits) + 1
    if dtype == torch.bool:
        return 2
    return torch.iinfo(dtype).max + 1


def _ints_as(shape, lo: int, span: int, dtype: torch.dtype, generator, device=None) -> Tensor:
    if span <= 0:
        raise RuntimeError("random_ expects 'from' to be less than 'to', but got an empty range")
    return _ints(shape, lo, span, generator, device).to(dtype)


_random_from = overloads_named("aten.random_.from")[0]  # `from` is a Python keyword


@register_kernel([aten.random_.default, aten.random_.to, _random_from], FLOAT_HALF_INT)
def random_(func, args, kwargs):
    self = args[0]
    generator = kwargs.get("generator")
    if func is aten.random_.default:
        lo, span = 0, _dtype_span(self.dtype)
    elif func is aten.random_.to:
        lo, span = 0, int(args[1])
    else:
        lo, hi = int(args[1]), args[2]
        span = (_dtype_span(self.dtype) if hi is None else int(hi)) - lo
    return _into(self, _ints_as(self.shape, lo, span, self.dtype, generator, self.device))


@register_kernel([aten.randint.default, aten.randint.low, aten.randint.generator, aten.randint.low_generator],
                 FLOAT_HALF_INT)
def randint(func, args, kwargs):
    _check_factory(func, args, kwargs)
    if func in (aten.randint.low, aten.randint.low_generator):
        lo, hi, size = args[0], args[1], args[2]
    else:
        lo, hi, size = 0, args[0], args[1]
    if hi <= lo:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    return _ints_as(size, lo, hi - lo, kwargs.get("dtype") or torch.int64, kwargs.get("generator"),
                    _factory_device(kwargs))


@register_kernel([aten.randperm.default, aten.randperm.generator], FLOAT_HALF_INT)
def randperm(func, args, kwargs):
    _check_factory(func, args, kwargs)
    n = int(args[0])
    keys = _ints((n,), 0, 1 << 64, kwargs.get("generator"), _factory_device(kwargs))
    # the permutation that sorts 64-bit keys, ties by position (a stable sort of integers: exact)
    perm = torch.sort(keys, stable=True).indices
    return perm.to(kwargs.get("dtype") or torch.int64)


# ---------------------------------------------------------------- bernoulli and dropout

def _bernoulli_mask(shape, p, generator, device) -> Tensor:
    """u < p with u float64 uniform in [0, 1) (53 bits) on ``device``, p a number or a float64 tensor."""
    u = _draw(UNIFORM, shape, torch.float64, 0.0, 1.0, generator, device)
    return u < p


def _check_p(p) -> None:
    if isinstance(p, Tensor):
        if p.numel() and not bool(((p >= 0) & (p <= 1)).all()):
            raise RuntimeError("bernoulli expects all elements of p to be in [0, 1]")
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli expects p to be in [0, 1], but got p={p}")


@register_kernel([aten.bernoulli_.float, aten.bernoulli_.Tensor], FLOAT_HALF_INT)
def bernoulli_(func, args, kwargs):
    self = args[0]
    _check_like(func, args, kwargs, self)
    check_float_half_int(func, args, kwargs, self)
    p = args[1] if len(args) > 1 else 0.5
    if isinstance(p, Tensor):
        p = p.to(torch.float64).expand(self.shape)
    _check_p(p)
    return _into(self, _bernoulli_mask(self.shape, p, kwargs.get("generator"), self.device))


@register_kernel([aten.bernoulli.default, aten.bernoulli.p], FLOAT_HALF_INT)
def bernoulli(func, args, kwargs):
    x = args[0]
    _check_like(func, args, kwargs, x)
    check_float_half_int(func, args, kwargs, x)
    p = x.to(torch.float64) if func is aten.bernoulli.default else args[1]
    _check_p(p)
    return _bernoulli_mask(x.shape, p, kwargs.get("generator"), x.device).to(x.dtype)


def _scaled_by_mask(x: Tensor, mask: Tensor, scale: float) -> Tensor:
    """x * (scale where mask else 0): one IEEE multiply per element with scale rounded to x's
    dtype, the value torch's (x * mask) * scale gives (x * 0 keeps NaN and signs)."""
    factor = torch.where(mask, torch.tensor(scale, dtype=torch.float64).to(x.dtype).to(x.device),
                         torch.zeros((), dtype=x.dtype, device=x.device))
    return call_registered(aten.mul.Tensor, x, factor)  # repmode's multiply: canonical NaNs


@register_kernel(aten.native_dropout.default, FLOAT_HALF_INT)
def native_dropout(func, args, kwargs):
    x, p, train = args
    if train is False or (train is None and p == 0):
        return x.clone(), torch.ones_like(x, dtype=torch.bool)
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    keep = 1.0 - p
    mask = _like(x, {}, _bernoulli_mask(x.shape, keep, kwargs.get("generator"), x.device))  # x's layout, as native
    scale = 0.0 if keep == 0 else 1.0 / keep
    return _scaled_by_mask(x, mask, scale), mask


@register_kernel(aten.native_dropout_backward.default, FLOAT_HALF_INT)
def native_dropout_backward(func, args, kwargs):
    grad, mask, scale = args
    if not math.isfinite(scale):
        raise unsupported(func, args, kwargs, "a non-finite dropout scale")
    return _scaled_by_mask(grad, mask, scale)


# ---------------------------------------------------------------- normal with tensor parameters

@register_kernel([aten.normal.Tensor_float, aten.normal.float_Tensor, aten.normal.Tensor_Tensor], FLOAT_WIDENED)
def normal_tensor(func, args, kwargs):
    """mean + std * z, z the float64 standard normal draws of the broadcast shape, the product and
    the sum in float64 (mean and std widened exactly), rounded once to the result dtype."""
    mean, std = args[0], args[1] if len(args) > 1 else 1.0
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    dtype = torch.result_type(mean, std) if len(tensors) == 2 else tensors[0].dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"normal expects floating-point mean and std, got {dtype}")
    if bool((torch.as_tensor(std) < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    device = check_device(func, args, kwargs, *tensors)
    z = _draw(NORMAL, shape, torch.float64, 0.0, 1.0, kwargs.get("generator"), device)
    # contiguous operands: native torch's result is a fresh contiguous tensor whatever mean's layout
    wide = [t.to(torch.float64).contiguous() if isinstance(t, Tensor) else float(t) for t in (mean, std)]
    return round_to(wide[0] + wide[1] * z, dtype)


@register_kernel(aten.normal.float_float, FLOAT_WIDENED)
def normal_float_float(func, args, kwargs):
    _check_factory(func, args, kwargs)
    mean, std, size = args[0], args[1], args[2]
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _draw(NORMAL, size, _factory_dtype(kwargs), mean, std, kwargs.get("generator"), _factory_device(kwargs))


# ---------------------------------------------------------------- multinomial

def _sequential_cumsum(rows: Tensor) -> Tensor:
    """Prefix sums along the last dim of a contiguous float64 matrix, each a sequential chain
    (repmode's cumsum order)."""
    return cumulative_rows(rows, product=False)


@register_kernel(aten.multinomial.default, FLOAT_WIDENED)
def multinomial(func, args, kwargs):
    """With replacement: u float64 uniform per sample, the category is the first j with
    u * S < C_j (C the sequential float64 prefix sums of the row, S = C_last). Without: each
    category gets an exponential clock E_j / p_j (E_j the exponential(1) formula) and the k
    earliest win, in order (ties by index)."""
    probs, k = args[0], int(args[1])
    replacement = args[2] if len(args) > 2 else kwargs.get("replacement", False)
    generator = kwargs.get("generator")
    check_device(func, args, kwargs, probs)
    if probs.dim() not in (1, 2) or not probs.is_floating_point():
        raise RuntimeError("multinomial expects a 1-D or 2-D floating-point probability tensor")
    rows = probs.reshape(-1, probs.shape[-1]).to(torch.float64).contiguous()
    if bool((rows < 0).any()) or not bool(torch.isfinite(rows).all()):
        raise RuntimeError("multinomial: probabilities must be finite and non-negative")
    nonzero = (rows > 0).sum(1)
    if bool((nonzero == 0).any()):
        raise RuntimeError("multinomial: every row needs a positive probability")
    if not replacement and k > int(nonzero.min()):
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    m, n = rows.shape
    if replacement:
        cum = _sequential_cumsum(rows)
        u = _draw(UNIFORM, (m, k), torch.float64, 0.0, 1.0, generator, rows.device)
        x = u * cum[:, -1:]
        idx = torch.searchsorted(cum, x, right=True)
        last = n - 1 - torch.argmax((rows.flip(1) > 0).to(torch.int64), dim=1, keepdim=True)
        idx = torch.minimum(idx, last)
    else:
        clocks = _draw(EXPONENTIAL, (m, n), torch.float64, 1.0, 0.0, generator, rows.device) / rows
        idx = torch.sort(clocks, dim=1, stable=True).indices[:, :k]
    return idx.reshape(*probs.shape[:-1], k).contiguous()  # a fresh contiguous result, as native torch's


# ---------------------------------------------------------------- more overloads: out=, generators, *_like

@register_kernel([aten.rand_like.generator, aten.randn_like.generator], FLOAT_WIDENED)
def rand_like_generator(func, args, kwargs):
    functional = aten.rand_like.default if func is aten.rand_like.generator else aten.randn_like.default
    return rand_like(functional, args, kwargs)


@register_kernel([aten.randint_like.default, aten.randint_like.generator, aten.randint_like.low_dtype,
                  aten.randint_like.low_generator_dtype], FLOAT_HALF_INT)
def randint_like(func, args, kwargs):
    _check_factory(func, args, kwargs)
    x = args[0]
    _check_like(func, args, kwargs, x)  # the result goes on x's device
    lo, hi = (0, args[1]) if func in (aten.randint_like.default, aten.randint_like.generator) else (args[1], args[2])
    if hi <= lo:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    values = _ints_as(x.shape, lo, hi - lo, kwargs.get("dtype") or x.dtype, kwargs.get("generator"), x.device)
    return _like(x, kwargs, values)


@register_kernel(aten.bernoulli.Tensor, FLOAT_HALF_INT)
def bernoulli_tensor_p(func, args, kwargs):
    x, p = args[0], args[1]
    _check_like(func, args, kwargs, x)
    check_float_half_int(func, args, kwargs, x, p)
    p = p.to(torch.float64).expand(x.shape)
    _check_p(p)
    return _bernoulli_mask(x.shape, p, kwargs.get("generator"), x.device).to(x.dtype)


# out= forms: the functional overload's result written into `out` the way torch does (a factory
# draws in the out tensor's dtype).
register_out_forms([
    aten.rand.out, aten.rand.generator_out, aten.randn.out, aten.randn.generator_out,
    aten.randint.out, aten.randint.generator_out, aten.randint.low_out, aten.randint.low_generator_out,
    aten.randperm.out, aten.randperm.generator_out,
    aten.normal.Tensor_float_out, aten.normal.float_Tensor_out, aten.normal.Tensor_Tensor_out,
    aten.normal.float_float_out,
    aten.bernoulli.out, aten.bernoulli.Tensor_out, aten.bernoulli.float_out,
    aten.multinomial.out, aten.rand_like.out, aten.randn_like.out,
])
