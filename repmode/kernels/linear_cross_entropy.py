"""torch.nn.functional.linear_cross_entropy's chunked ops (``options=`` given, torch ≥ 2.13): the
custom ops ``torch_nn::_linear_cross_entropy_batch_chunked`` (mean/sum: the loss and its
gradients computed in the forward) and ``..._no_reduction`` (per-sample losses), as composites
of repmode's ``mm``, ``_log_softmax``, ``nll_loss`` and their backward ops. Order:
docs/semantics.md "Linear cross entropy".

torch's kernels chunk the batch to bound memory, and sum the loss and the weight and bias
gradients chunk by chunk; repmode's definition is the unchunked one — the bits of
``cross_entropy(linear(input, W, b), target)`` and its gradients through repmode — whatever
``batch_chunk_size`` is (repmode's products are batch invariant, so each row's logits are the
same in any chunk)."""
from __future__ import annotations

import torch

from ..registry import overloads_named, register_composite
from ._common import FLOAT_WIDENED, call_registered, unsupported

aten = torch.ops.aten
Tensor = torch.Tensor
_REDUCTION = {"none": 0, "mean": 1, "sum": 2}

try:  # defines the torch_nn custom ops (torch >= 2.13); torch imports it lazily
    import torch.nn.modules.linear_cross_entropy  # noqa: F401
except ImportError:
    pass


def _check(func, args, kwargs, input, linear_weight, linear_bias, weight):
    for t in (linear_weight, linear_bias, weight):
        if isinstance(t, Tensor) and t.dtype != input.dtype:
            raise unsupported(func, args, kwargs, f"mixed dtypes ({input.dtype} and {t.dtype}) are not supported")
    if input.dim() != 2 or linear_weight.dim() != 2:
        raise unsupported(func, args, kwargs, "input and linear_weight must be 2-D (torch's chunked path)")


def _log_probs(input, linear_weight, linear_bias):
    logits = call_registered(aten.mm.default, input, linear_weight.t())
    if linear_bias is not None:
        logits = call_registered(aten.add.Tensor, logits, linear_bias)
    return call_registered(aten._log_softmax.default, logits, 1, False)


def _loss(lsm, target, weight, reduction, ignore_index):
    return call_registered(aten.nll_loss_forward.default, lsm, target, weight, _REDUCTION[reduction], ignore_index)


def _grad_logits(grad_loss, lsm, target, weight, reduction, ignore_index, total_weight):
    grad_lsm = call_registered(aten.nll_loss_backward.default, grad_loss, lsm, target, weight,
                               _REDUCTION[reduction], ignore_index, total_weight)
    return call_registered(aten._log_softmax_backward_data.default, grad_lsm, lsm, 1, lsm.dtype)


@register_composite(overloads_named("torch_nn._linear_cross_entropy_batch_chunked.default"), FLOAT_WIDENED)
def linear_cross_entropy_chunked(func, args, kwargs):
    (input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing, _chunk, _policy,
     _acc, _retain, want_input, want_weight, want_bias) = args
    _check(func, args, kwargs, input, linear_weight, linear_bias, weight)
    if reduction not in ("mean", "sum") or label_smoothing != 0.0:
        raise RuntimeError(f"linear_cross_entropy does not support {reduction=} with label_smoothing "
                           f"{label_smoothing} on the chunked path")
    lsm = _log_probs(input, linear_weight, linear_bias)
    loss, total_weight = _loss(lsm, target, weight, reduction, ignore_index)
    one = torch.ones((), dtype=input.dtype)
    g = _grad_logits(one, lsm, target, weight, reduction, ignore_index, total_weight)
    empty = torch.empty((0, 0), dtype=input.dtype)
    grad_input = call_registered(aten.mm.default, g, linear_weight) if want_input else empty
    grad_weight = call_registered(aten.mm.default, g.t(), input) if want_weight else empty
    grad_bias = (call_registered(aten.sum.dim_IntList, g, [0]) if want_bias
                 else torch.empty((0,), dtype=input.dtype))
    return loss, grad_input, grad_weight, grad_bias


@register_composite(overloads_named("torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default"),
                    FLOAT_WIDENED)
def linear_cross_entropy_chunked_no_reduction(func, args, kwargs):
    input, linear_weight, target, linear_bias, weight, ignore_index = args[:6]
    _check(func, args, kwargs, input, linear_weight, linear_bias, weight)
    return _loss(_log_probs(input, linear_weight, linear_bias), target, weight, "none", ignore_index)[0]
