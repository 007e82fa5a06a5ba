"""Reproducibility for one module or one call, without a ``with`` block around the user's code.

``run_reproducibly(fn, ...)`` runs ``fn`` inside ``repmode.enabled()`` and then marks the
autograd nodes ``fn`` created, so that their backward also runs through repmode whenever the
backward is started — even outside any block (``loss.backward()`` after the call returned).
Nodes created outside ``fn`` (the loss, the inputs' history) keep running as they would.

``from_torch_module(model)`` (alias ``wrap``) routes every ``forward`` of ``model`` through
``run_reproducibly``. It modifies ``model`` in place — one instance attribute, ``forward`` —
and returns the same object: parameters, buffers, ``state_dict``, ``train()``/``eval()``,
hooks, ``isinstance`` and pickling keep working. Forward hooks registered on ``model`` itself
run outside the mode (those of its submodules run inside); ``unwrap(model)`` undoes it.
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import _pop_mode, _push_mode

from .mode import ReproducibleMode, active_mode, enabled

_MARK = "repmode"  # key in an autograd node's metadata: its backward already runs through repmode


def _grad_fns(obj, into: list) -> list:
    if isinstance(obj, torch.Tensor):
        if obj.grad_fn is not None:
            into.append(obj.grad_fn)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _grad_fns(item, into)
    elif isinstance(obj, dict):
        for item in obj.values():
            _grad_fns(item, into)
    return into


def _cover_backward(outputs, inputs, mode: ReproducibleMode) -> None:
    """Make the backward of every node between ``outputs`` and ``inputs`` run under ``mode``.

    A node's pre-hook pushes the mode (unless a repmode mode is already active) and its
    post-hook pops it. If the node's backward raises, autograd restores the thread's dispatch
    mode stack as it was when the backward started, so nothing stays pushed."""
    stop = set(_grad_fns(inputs, []))
    pending = _grad_fns(outputs, [])
    seen = set()
    while pending:
        node = pending.pop()
        if node is None or node in seen or node in stop:
            continue
        seen.add(node)
        # AccumulateGrad (a leaf's gradient slot) only copies or adds, exactly; it outlives the
        # graph, so hooking it would pile hooks up call after call.
        if type(node).__name__ == "AccumulateGrad" or node.metadata.get(_MARK):
            continue
        node.metadata[_MARK] = True
        pushed = []

        def enter(grad_outputs, pushed=pushed):
            if active_mode() is None:
                _push_mode(mode)
                pushed.append(True)

        def leave(grad_inputs, grad_outputs, pushed=pushed):
            if pushed:
                pushed.pop()
                _pop_mode()

        node.register_prehook(enter)
        node.register_hook(leave)
        pending.extend(next_node for next_node, _ in node.next_functions)


def run_reproducibly(fn, *args, strict: bool = True, **kwargs):
    """``fn(*args, **kwargs)`` inside ``repmode.enabled(strict=strict)``; the backward of what it
    computed runs through repmode too, whenever and wherever it is started."""
    with enabled(strict=strict) as session:
        out = fn(*args, **kwargs)
        mode = active_mode()  # the mode that ran fn: this block's, or an enclosing block's
    if torch.is_grad_enabled():
        _cover_backward(out, (args, kwargs), mode if mode is not None else session.mode)
    return out


class ReproducibleForward:
    """What ``from_torch_module`` puts in ``model.forward``: the original forward, run reproducibly."""

    def __init__(self, original, strict: bool):
        self.original = original
        self.strict = strict

    def __call__(self, *args, **kwargs):
        return run_reproducibly(self.original, *args, strict=self.strict, **kwargs)


def from_torch_module(model: torch.nn.Module, strict: bool = True) -> torch.nn.Module:
    """Make ``model``'s forward (and the backward of its outputs) run through repmode.

    Modifies ``model`` in place and returns it (no copy). Wrapping an already wrapped module
    changes nothing. With ``strict=True`` an op without a reproducible implementation raises
    :class:`repmode.UnsupportedOpError`."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"repmode.from_torch_module expects a torch.nn.Module, got {type(model).__name__}")
    if isinstance(model.__dict__.get("forward"), ReproducibleForward):
        return model
    model.forward = ReproducibleForward(model.forward, strict)
    return model


wrap = from_torch_module


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """Undo :func:`from_torch_module` (in place); a module that is not wrapped is returned as is."""
    current = model.__dict__.get("forward")
    if isinstance(current, ReproducibleForward):
        original = current.original
        del model.__dict__["forward"]
        class_method = getattr(original, "__self__", None) is model and \
            getattr(original, "__func__", None) is type(model).forward
        if not class_method:  # the wrapped forward was an instance attribute of its own: put it back
            model.forward = original
    return model


def is_wrapped(model: torch.nn.Module) -> bool:
    return isinstance(model.__dict__.get("forward"), ReproducibleForward)
