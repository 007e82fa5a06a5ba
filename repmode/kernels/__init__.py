"""Kernel families. :func:`load` imports every family, which registers its overloads in
``repmode.registry``, then finalizes the table; each module is one family and its
registrations are its table of contents."""
from __future__ import annotations

import threading

from .. import errors, registry

_loaded = False
_lock = threading.Lock()


def load() -> None:
    """Register every overload repmode supports (once; cheap afterwards)."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        _import_families()
        _finalize()
        _loaded = True


def _import_families() -> None:
    # A family that looks another's registrations up at import time imports that family itself
    # (foreach), so the order here does not matter.
    import torch.distributed as dist

    from . import (  # noqa: F401  (importing a family registers its overloads)
        activations,
        attention,
        batch_norm,
        bessel,
        convolution,
        ctc,
        elementwise,
        elementwise_more,
        embedding,
        fft,
        foreach,
        fused_optim,
        grid_sample,
        histogram,
        indexing,
        integer,
        layer_norm,
        layers,
        linalg,
        linear_cross_entropy,
        losses,
        margin_losses,
        mathtail,
        matmul,
        moe,
        padding,
        passthrough,
        pooling,
        random,
        recurrent,
        reduction,
        resample,
        segment_reduce,
        softmax_loss,
        sorting,
        special,
        training_utils,
    )

    if dist.is_available():  # torch builds without distributed support have no c10d ops
        from . import collectives  # noqa: F401


def _finalize() -> None:
    """Refusals raise UnsupportedOpError with their registered reason (the registry is a leaf and
    cannot build the error itself)."""
    for reg in registry.REGISTRY.values():
        if reg.kind == "refusal":
            registry.DISPATCH[reg.overload] = _refusal(reg.reason)


def _refusal(reason: str):
    def refuse(func, args, kwargs):
        raise errors.refused(func, args, kwargs, reason, depth=3)

    return refuse


def registrations() -> list[registry.Registration]:
    """Every registered overload, sorted by name."""
    load()
    return registry.registered()


def supported_ops() -> list[tuple[str, str]]:
    """``(overload name, kind)`` for every registered overload, sorted by name."""
    return [(r.name, r.kind) for r in registrations()]
