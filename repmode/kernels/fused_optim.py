"""The fused optimizer steps (``fused=True``): ``_fused_adam_``, ``_fused_adamw_``, ``_fused_sgd_``.

Defined as the for-loop optimizer's update (torch.optim's single-tensor code path, step by
step, with the same Python-float scalars) run through repmode's implementations of each
elementwise op. So ``fused=True`` gives exactly the bits of the default for-loop form. Gradient
scaling (``grad_scale``/``found_inf``, from torch.amp's GradScaler) is not supported yet.
"""
from __future__ import annotations

import torch

from ..registry import register_composite
from ._common import FLOAT_WIDENED, unsupported
from ._common import call_registered as _call

aten = torch.ops.aten


def _scalar(x) -> float:
    return float(x.item()) if isinstance(x, torch.Tensor) else float(x)


def _check_no_scaling(func, args, kwargs) -> None:
    if kwargs.get("grad_scale") is not None or kwargs.get("found_inf") is not None:
        raise unsupported(func, args, kwargs, "fused optimizer steps with a GradScaler's grad_scale/found_inf "
                                              "are not supported yet (use fused=False or no GradScaler)")


def _adam(func, args, kwargs, decoupled: bool):
    _check_no_scaling(func, args, kwargs)
    params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps = args[:6]
    lr, beta1, beta2 = _scalar(kwargs["lr"]), kwargs["beta1"], kwargs["beta2"]
    wd, eps, amsgrad, maximize = kwargs["weight_decay"], kwargs["eps"], kwargs["amsgrad"], kwargs["maximize"]
    for i, param in enumerate(params):
        # the caller has already added 1 to state_steps (torch.optim's _fused_adam)
        grad = _call(aten.neg.default, grads[i]) if maximize else grads[i]
        if wd != 0:
            if decoupled:
                _call(aten.mul_.Scalar, param, 1 - lr * wd)
            else:
                grad = _call(aten.add.Tensor, grad, param, alpha=wd)
        _call(aten.lerp_.Scalar, exp_avgs[i], grad, 1 - beta1)
        _call(aten.mul_.Scalar, exp_avg_sqs[i], beta2)
        _call(aten.addcmul_.default, exp_avg_sqs[i], grad, grad, value=1 - beta2)
        step = _scalar(state_steps[i])
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        second = exp_avg_sqs[i]
        if amsgrad:
            _call(aten.maximum.out, max_exp_avg_sqs[i], exp_avg_sqs[i], out=max_exp_avg_sqs[i])
            second = max_exp_avg_sqs[i]
        denom = _call(aten.div.Scalar, _call(aten.sqrt.default, second), bias_correction2_sqrt)
        _call(aten.add_.Scalar, denom, eps)
        _call(aten.addcdiv_.default, param, exp_avgs[i], denom, value=-step_size)


@register_composite([aten._fused_adam_.default, aten._fused_adam_.tensor_lr], FLOAT_WIDENED)
def fused_adam(func, args, kwargs):
    _adam(func, args, kwargs, decoupled=False)


@register_composite([aten._fused_adamw_.default, aten._fused_adamw_.tensor_lr], FLOAT_WIDENED)
def fused_adamw(func, args, kwargs):
    _adam(func, args, kwargs, decoupled=True)


@register_composite([aten._fused_sgd_.default, aten._fused_sgd_.tensor_lr], FLOAT_WIDENED)
def fused_sgd(func, args, kwargs):
    _check_no_scaling(func, args, kwargs)
    params, grads, buffers = args[:3]
    wd, momentum, lr = kwargs["weight_decay"], kwargs["momentum"], _scalar(kwargs["lr"])
    dampening, nesterov, maximize = kwargs["dampening"], kwargs["nesterov"], kwargs["maximize"]
    first = kwargs["is_first_step"]
    for i, param in enumerate(params):
        grad = _call(aten.neg.default, grads[i]) if maximize else grads[i]
        if wd != 0:
            grad = _call(aten.add.Tensor, grad, param, alpha=wd)
        if momentum != 0:
            buf = buffers[i]
            if first:  # the for-loop form clones the gradient into a new buffer
                _call(aten.copy_.default, buf, grad)
            else:
                _call(aten.mul_.Scalar, buf, momentum)
                _call(aten.add_.Tensor, buf, grad, alpha=1 - dampening)
            grad = _call(aten.add.Tensor, grad, buf, alpha=momentum) if nesterov else buf
        _call(aten.add_.Tensor, param, grad, alpha=-lr)
