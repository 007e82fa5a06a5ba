"""CTC loss: ``_ctc_loss`` and ``_ctc_loss_backward`` (what ``F.ctc_loss`` / ``nn.CTCLoss`` reach;
``ctc_loss`` itself is a composite whose reductions, ``zero_infinity`` masking and division by
the target lengths run on registered elementwise ops and reductions). The alpha/beta recursions run
in float64 with repmode's exp/log in the order of docs/semantics.md "CTC loss" (csrc/common/ctc.h);
the C++ kernel (csrc/cpu/ctc.cpp) puts batch elements on threads and never splits one; its CUDA twin
(csrc/cuda/ctc.cu) runs one GPU thread per batch element with the same per-sequence code."""
from __future__ import annotations

import torch

from .. import errors
from ..registry import register_composite, register_kernel
from ._common import DTYPE_CODE, FLOAT_ONLY, FLOATS, arguments, check_device, kernels_for, launch_arg, unsupported

aten = torch.ops.aten
Tensor = torch.Tensor


def _lengths(values, what: str) -> torch.Tensor:
    if isinstance(values, Tensor):
        if values.is_floating_point() or values.is_complex() or values.dtype == torch.bool:
            raise RuntimeError(f"{what} must be integral")
        return values.detach().to("cpu", torch.int64).contiguous().reshape(-1)
    return torch.tensor(list(values), dtype=torch.int64)


def _prepare(func, args, kwargs, log_probs, targets, input_lengths, target_lengths, blank):
    """Checked, int64 copies of the integer arguments and the per-sequence target offsets (torch's
    checks, plus the label range, which torch's CPU kernel does not check before reading)."""
    device = check_device(func, args, kwargs, log_probs, targets)
    if log_probs.dtype not in FLOATS:
        raise unsupported(func, args, kwargs, f"dtype {log_probs.dtype} is not supported (float32 and float64 are, "
                                              "as in torch's CPU kernel)")
    if targets.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"ctc_loss: targets must be int64 or int32, got {targets.dtype}")
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be 3-D (T, B, C), got {log_probs.dim()}-D")
    T, B, Cn = log_probs.shape
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if not 0 <= blank < Cn:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    if il.numel() != B:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != B:
        raise RuntimeError("target_lengths must be of size batch_size")
    if bool((tl < 0).any()):
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {int(tl.min())}")
    if bool((il < 0).any()):
        raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {int(il.min())}")
    if bool((il > T).any()):
        raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {int(il.max())}")
    tg = targets.to(torch.int64)
    max_len = int(tl.max()) if B else 0
    if tg.dim() == 1:
        total = int(tl.sum())
        if tg.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {tg.shape[0]} "
                               "for targets (while checking arguments for ctc_loss)")
        offsets = (torch.cumsum(tl, 0) - tl) * tg.stride(0)
        stride = tg.stride(0)
        used = tg
    elif tg.dim() == 2:
        if tg.shape[0] != B or tg.shape[1] < max_len:
            raise RuntimeError(f"Expected targets of size ({B}, >= {max_len}), got {tuple(tg.shape)} (while checking "
                               "arguments for ctc_loss)")
        offsets = torch.arange(B, dtype=torch.int64) * tg.stride(0)
        stride = tg.stride(1)
        used = tg[torch.arange(tg.shape[1])[None, :] < tl[:, None]]
    else:
        raise RuntimeError(f"ctc_loss: targets must be 1-D (concatenated) or 2-D (padded), got {tg.dim()}-D")
    if used.numel() and (bool((used < 0).any()) or bool((used >= Cn).any())):
        raise RuntimeError(f"ctc_loss: target labels must be in [0, {Cn}), got values in "
                           f"[{int(used.min())}, {int(used.max())}]")
    # the kernel reads offsets and lengths on the device of log_probs (exact copies)
    offsets, il, tl = (t.contiguous().to(device) for t in (offsets, il, tl))
    return tg, offsets, stride, il, tl, max_len


def _common_args(log_probs, tg, offsets, stride, il, tl, blank):
    T, B, Cn = log_probs.shape
    return (DTYPE_CODE[log_probs.dtype], T, B, Cn, log_probs.data_ptr(), *log_probs.stride(), tg.data_ptr(),
            offsets.data_ptr(), stride, il.data_ptr(), tl.data_ptr(), blank)


@register_kernel([aten._ctc_loss.default, aten._ctc_loss.Tensor], FLOAT_ONLY)
def ctc_loss_forward(func, args, kwargs):
    log_probs, targets, input_lengths, target_lengths, blank, _zero_infinity = arguments(func, args, kwargs)
    tg, offsets, stride, il, tl, max_len = _prepare(func, args, kwargs, log_probs, targets, input_lengths,
                                                    target_lengths, blank)
    T, B, _ = log_probs.shape
    S = 2 * max_len + 1
    nll = log_probs.new_empty((B,))
    log_alpha = log_probs.new_empty((B, T, S))
    kernels_for(log_probs).ctc_loss_forward(*_common_args(log_probs, tg, offsets, stride, il, tl, blank), S,
                                            nll.data_ptr(), log_alpha.data_ptr(), launch_arg(log_probs))
    return nll, log_alpha


@register_kernel([aten._ctc_loss_backward.default, aten._ctc_loss_backward.Tensor], FLOAT_ONLY)
def ctc_loss_backward(func, args, kwargs):
    (grad, log_probs, targets, input_lengths, target_lengths, _nll, _log_alpha, blank,
     zero_infinity) = arguments(func, args, kwargs)
    tg, offsets, stride, il, tl, max_len = _prepare(func, args, kwargs, log_probs, targets, input_lengths,
                                                    target_lengths, blank)
    T, B, Cn = log_probs.shape
    if grad.dtype != log_probs.dtype or grad.dim() != 1 or grad.shape[0] != B:
        raise unsupported(func, args, kwargs, f"the incoming gradient must be ({B},) of {log_probs.dtype}, got "
                                              f"{tuple(grad.shape)} of {grad.dtype}")
    out = log_probs.new_empty((T, B, Cn))
    # alpha is recomputed in float64 from the inputs (the log_alpha output holds it rounded to the
    # input dtype), so the gradient does not depend on who computed the forward
    kernels_for(log_probs).ctc_loss_backward(*_common_args(log_probs, tg, offsets, stride, il, tl, blank),
                                             grad.data_ptr(), 2 * max_len + 1, grad.stride(0), bool(zero_infinity),
                                             out.data_ptr(), launch_arg(log_probs))
    return out


@register_composite([aten._use_cudnn_ctc_loss.default, aten._use_cudnn_ctc_loss.Tensor,
                     aten._use_miopen_ctc_loss.default, aten._use_miopen_ctc_loss.Tensor], ("any",))
def use_vendor_ctc_loss(func, args, kwargs):
    """``torch.ctc_loss`` asks these on GPU tensors before choosing cuDNN's or MIOpen's kernel, whose
    order is its own: the answer is always False, so the call goes to ``_ctc_loss`` above on every
    device. (Sparse or quantized inputs: refused as every kernel refuses them.)"""
    refusal = errors.layout_refusal(func, args, kwargs)
    if refusal is not None:
        raise refusal
    return False
