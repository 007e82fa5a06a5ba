"""Training utilities: ``_fused_adagrad_`` (``Adagrad(fused=True)``) as the for-loop Adagrad
update, op by op, and the exact infinity tests ``clip_grad_norm_(error_if_nonfinite=True)``
reaches. ``clip_grad_norm_``/``clip_grad_value_`` (foreach or not), the LR schedulers (pure
Python arithmetic on floats) and RMSprop/Adagrad in their for-loop and foreach forms reach only
ops registered elsewhere (tests/families/training_utils/test_training_utils.py checks them in strict mode)."""
from __future__ import annotations

import numpy as np
import torch

from ..registry import register_composite
from ._common import FLOAT_WIDENED, unsupported
from ._common import call_registered as _call

aten = torch.ops.aten


def _scalar(x) -> float:
    return float(x.item()) if isinstance(x, torch.Tensor) else float(x)


@register_composite([aten._fused_adagrad_.default, aten._fused_adagrad_.tensor_lr], FLOAT_WIDENED)
def fused_adagrad(func, args, kwargs):
    if kwargs.get("grad_scale") is not None or kwargs.get("found_inf") is not None:
        raise unsupported(func, args, kwargs, "fused Adagrad with a GradScaler's grad_scale/found_inf is not "
                                              "supported yet (use fused=False or no GradScaler)")
    params, grads, state_sums, state_steps = args[:4]
    lr, lr_decay, wd = _scalar(kwargs["lr"]), kwargs["lr_decay"], kwargs["weight_decay"]
    eps, maximize = kwargs["eps"], kwargs["maximize"]
    for i, param in enumerate(params):
        if grads[i].is_sparse:
            raise unsupported(func, args, kwargs, "sparse gradients are not supported")
        # the caller has already added 1 to state_steps (torch.optim's _fused_adagrad)
        step = _scalar(state_steps[i])
        grad = _call(aten.neg.default, grads[i]) if maximize else grads[i]
        if wd != 0:
            grad = _call(aten.add.Tensor, grad, param, alpha=wd)
        clr = lr / (1 + (step - 1) * lr_decay)
        _call(aten.addcmul_.default, state_sums[i], grad, grad, value=1)
        std = _call(aten.add_.Scalar, _call(aten.sqrt.default, state_sums[i]), eps)
        _call(aten.addcdiv_.default, param, grad, std, value=-clr)


# ---- GradScaler (torch.amp.GradScaler): its two ops -------------------------------------------

@register_composite(aten._amp_foreach_non_finite_check_and_unscale_.default, FLOAT_WIDENED)
def amp_non_finite_check_and_unscale(func, args, kwargs):
    """For each gradient: found_inf = 1 if any element is inf or NaN (an OR: no order), then
    g = g * inv_scale, one IEEE multiplication per element (repmode's mul_)."""
    grads, found_inf, inv_scale = args[:3]
    inv_scale = inv_scale.reshape(())  # torch takes any one-element tensor (0-dim grads included)
    for g in grads:
        if g is None:
            continue
        non_finite = _call(aten.logical_or.default, _call(aten.isinf.default, g), _call(aten.isnan.default, g))
        if bool(_call(aten.any.default, non_finite)):
            found_inf.fill_(1.0)
        _call(aten.mul_.Tensor, g, inv_scale)


@register_composite(aten._amp_update_scale_.default, FLOAT_WIDENED)
def amp_update_scale(func, args, kwargs):
    """torch's rule: on an inf/NaN step scale = scale·backoff and the tracker restarts; else after
    growth_interval clean steps scale = scale·growth (if finite). Each product is one float32
    multiplication of the scale by the factor rounded to float32 (numpy's IEEE float32)."""
    scale, tracker, found_inf, growth, backoff, interval = args[:6]
    if scale.dtype != torch.float32 or scale.numel() != 1:
        raise unsupported(func, args, kwargs, "the scale must be a one-element float32 tensor")
    current = np.float32(scale.item())
    if float(found_inf.item()) != 0.0:
        scale.fill_(float(current * np.float32(backoff)))
        tracker.fill_(0)
    else:
        successful = int(tracker.item()) + 1
        if successful == interval:
            with np.errstate(over="ignore"):
                grown = current * np.float32(growth)
            if np.isfinite(grown):
                scale.fill_(float(grown))
            tracker.fill_(0)
        else:
            tracker.fill_(successful)
    return scale
