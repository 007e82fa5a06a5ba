"""The table of contents of repmode: which aten overloads run, and how.

Every overload repmode handles is registered here by a decorator that sits next to its
implementation in ``repmode/kernels/<family>.py``. There are three kinds:

* ``kernel``      — repmode's own compiled code computes the result in its canonical order;
* ``passthrough`` — the native torch kernel runs, because the op's result is bit-exactly
                    defined (data movement, views, selection, comparisons, casts, single
                    IEEE-754 operations); each entry carries a one-line reason;
* ``composite``   — Python built only from registered ops.

The mode's hot path is one dict lookup in :data:`DISPATCH`, which maps an ``OpOverload``
to a callable ``impl(func, args, kwargs)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import torch

KINDS = ("kernel", "passthrough", "composite")


@dataclass(frozen=True)
class Registration:
    overload: torch._ops.OpOverload
    kind: str
    impl: Callable
    family: str
    reason: str = ""

    @property
    def name(self) -> str:
        return str(self.overload)


REGISTRY: dict[torch._ops.OpOverload, Registration] = {}
DISPATCH: dict[torch._ops.OpOverload, Callable] = {}


def _as_list(overloads) -> list:
    if isinstance(overloads, (list, tuple)):
        return list(overloads)
    return [overloads]


def _family_of(impl: Callable) -> str:
    module = getattr(impl, "__module__", "") or ""
    return module.rsplit(".", 1)[-1]


def _add(overload, kind: str, impl: Callable, family: str, reason: str = "") -> None:
    if not isinstance(overload, torch._ops.OpOverload):
        raise TypeError(f"register expects aten OpOverloads (e.g. aten.mm.default), got {overload!r}")
    if overload in REGISTRY:
        raise ValueError(f"{overload} is registered twice ({REGISTRY[overload].family} and {family})")
    REGISTRY[overload] = Registration(overload, kind, impl, family, reason)
    DISPATCH[overload] = impl


def register_kernel(overloads) -> Callable:
    """Decorator: ``impl(func, args, kwargs)`` runs repmode's compiled kernels for these overloads."""

    def wrap(impl: Callable) -> Callable:
        for op in _as_list(overloads):
            _add(op, "kernel", impl, _family_of(impl))
        return impl

    return wrap


def register_composite(overloads) -> Callable:
    """Decorator: ``impl(func, args, kwargs)`` is Python built only from registered ops."""

    def wrap(impl: Callable) -> Callable:
        for op in _as_list(overloads):
            _add(op, "composite", impl, _family_of(impl))
        return impl

    return wrap


def run_native(func, args, kwargs):
    """Run the overload with torch's own kernel."""
    return func(*args, **kwargs) if kwargs else func(*args)


def register_passthrough(overloads: Iterable, reason: str, family: str = "passthrough") -> None:
    """Run these overloads natively; ``reason`` says why their result is bit-exactly defined."""
    if not reason or not reason.strip():
        raise ValueError("every passthrough registration needs a one-line reason")
    for op in _as_list(overloads):
        _add(op, "passthrough", run_native, family, reason)


def supported_ops() -> list[tuple[str, str]]:
    """``(overload name, kind)`` for every registered overload, sorted by name."""
    _load_kernels()
    return sorted((r.name, r.kind) for r in REGISTRY.values())


def registrations() -> list[Registration]:
    _load_kernels()
    return sorted(REGISTRY.values(), key=lambda r: r.name)


def _load_kernels() -> None:
    # Importing the families fills the tables (registration happens at import).
    import repmode.kernels  # noqa: F401
