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

# The input dtypes an overload accepts, as tags (the table of supported ops, docs/supported_ops.md,
# prints them; tests/test_supported_ops_table.py calls ops to check them):
DTYPE_TAGS = {
    "float32": "float32",
    "float64": "float64",
    "widened": "bfloat16 and float16, computed in float32 (or wider) and rounded once to the input dtype",
    "half": "bfloat16 and float16 in their own dtype (exact data movement, or one rounding per step)",
    "integer": "integer dtypes: exact integer arithmetic, or converted to a float dtype where torch's "
               "result is floating",
    "any": "every dtype",
}


@dataclass(frozen=True)
class Registration:
    overload: torch._ops.OpOverload
    kind: str
    impl: Callable
    family: str
    reason: str = ""
    dtypes: tuple[str, ...] | None = None  # DTYPE_TAGS; None: not declared

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


def _add(overload, kind: str, impl: Callable, family: str, reason: str = "", dtypes=None) -> None:
    if not isinstance(overload, torch._ops.OpOverload):
        raise TypeError(f"register expects aten OpOverloads (e.g. aten.mm.default), got {overload!r}")
    if overload in REGISTRY:
        raise ValueError(f"{overload} is registered twice ({REGISTRY[overload].family} and {family})")
    if dtypes is not None:
        dtypes = tuple(dtypes)
        unknown = [t for t in dtypes if t not in DTYPE_TAGS]
        if unknown:
            raise ValueError(f"{overload}: unknown dtype tags {unknown} (known: {list(DTYPE_TAGS)})")
    REGISTRY[overload] = Registration(overload, kind, impl, family, reason, dtypes)
    DISPATCH[overload] = impl


def register_kernel(overloads, dtypes=None) -> Callable:
    """Decorator: ``impl(func, args, kwargs)`` runs repmode's compiled kernels for these overloads;
    ``dtypes``: the input dtypes they accept (tags of :data:`DTYPE_TAGS`)."""

    def wrap(impl: Callable) -> Callable:
        for op in _as_list(overloads):
            _add(op, "kernel", impl, _family_of(impl), dtypes=dtypes)
        return impl

    return wrap


def register_composite(overloads, dtypes=None) -> Callable:
    """Decorator: ``impl(func, args, kwargs)`` is Python built only from registered ops;
    ``dtypes``: the input dtypes they accept (tags of :data:`DTYPE_TAGS`)."""

    def wrap(impl: Callable) -> Callable:
        for op in _as_list(overloads):
            _add(op, "composite", impl, _family_of(impl), dtypes=dtypes)
        return impl

    return wrap


def run_native(func, args, kwargs):
    """Run the overload with torch's own kernel."""
    return func(*args, **kwargs) if kwargs else func(*args)


def overloads_named(*names: str) -> list:
    """Resolve ``"aten.view.default"``-style names (any operator namespace), skipping those this
    torch lacks."""
    found = []
    for name in names:
        ns, op, overload = name.split(".")
        packet = getattr(getattr(torch.ops, ns), op, None)
        if packet is not None and overload in packet.overloads():
            found.append(getattr(packet, overload))
    return found


def register_passthrough(overloads: Iterable, reason: str, family: str = "passthrough") -> None:
    """Run these overloads natively; ``reason`` says why their result is bit-exactly defined."""
    if not reason or not reason.strip():
        raise ValueError("every passthrough registration needs a one-line reason")
    for op in _as_list(overloads):
        _add(op, "passthrough", run_native, family, reason, dtypes=("any",))


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
