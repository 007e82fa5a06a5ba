"""The table of contents of repmode: which aten overloads run, and how.

A leaf module: it imports nothing of repmode. The kernel families (``repmode/kernels/``) fill
it when :func:`repmode.kernels.load` imports them; every overload is registered by a decorator
or call that sits next to its implementation and names the overload explicitly (so
``grep -rn aten.exp.default repmode/kernels`` lands on its registration). The kinds:

* ``kernel``      — repmode's own compiled code computes the result in its canonical order;
* ``passthrough`` — the native torch kernel runs, because the op's result is bit-exactly
                    defined (data movement, views, selection, comparisons, casts, single
                    IEEE-754 operations); each entry carries a one-line reason;
* ``composite``   — Python built only from registered ops;
* ``refusal``     — deliberately not supported, with the reason the user is shown.

``out=`` overloads are never written by hand: ``out=[...]`` on a registration derives each from
the functional implementation (:func:`out_variant`).

The mode's hot path is one dict lookup in :data:`DISPATCH`, which maps an ``OpOverload``
to a callable ``impl(func, args, kwargs)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import torch

KINDS = ("kernel", "passthrough", "composite", "refusal")

# The input dtypes an overload accepts, as tags (the table of supported ops, docs/supported_ops.md,
# prints them; the supported-ops table test calls ops to check them):
DTYPE_TAGS = {
    "float32": "float32",
    "float64": "float64",
    "widened": "bfloat16 and float16, computed in float32 (or wider) and rounded once to the input dtype",
    "half": "bfloat16 and float16 in their own dtype (exact data movement, or one rounding per step)",
    "integer": "integer dtypes: exact integer arithmetic, or converted to a float dtype where torch's "
               "result is floating",
    "any": "every dtype",
    "complex": "complex64 and complex128 (interleaved float32/float64 pairs; the FFT path only)",
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


def _register(kind: str, overloads, dtypes, out) -> Callable:
    def wrap(impl: Callable) -> Callable:
        family = _family_of(impl)
        for op in _as_list(overloads):
            _add(op, kind, impl, family, dtypes=dtypes)
        for op in _as_list(out or []):
            _add(op, kind, out_variant(op, impl), family, dtypes=dtypes)
        return impl

    return wrap


def register_kernel(overloads, dtypes=None, out=None) -> Callable:
    """Decorator: ``impl(func, args, kwargs)`` runs repmode's compiled kernels for these overloads;
    ``dtypes``: the input dtypes they accept (tags of :data:`DTYPE_TAGS`); ``out``: the ``out=``
    overloads of the same op, each derived from ``impl`` by :func:`out_variant`."""
    return _register("kernel", overloads, dtypes, out)


def register_composite(overloads, dtypes=None, out=None) -> Callable:
    """Decorator: ``impl(func, args, kwargs)`` is Python built only from registered ops (``dtypes``
    and ``out`` as for :func:`register_kernel`)."""
    return _register("composite", overloads, dtypes, out)


def run_native(func, args, kwargs):
    """Run the overload with torch's own kernel."""
    return func(*args, **kwargs) if kwargs else func(*args)


def register_out_forms(out_overloads: Iterable) -> None:
    """Register ``out=`` overloads whose functional overloads are registered already (same kind,
    family and dtypes), each derived by :func:`out_variant`: for families whose functional
    registrations are spread over the module."""
    for op in _as_list(out_overloads):
        reg = REGISTRY[functional_of(op)]
        _add(op, reg.kind, out_variant(op, reg.impl), reg.family, dtypes=reg.dtypes)


def register_inplace_forms(inplace_overloads: Iterable) -> None:
    """Register in-place overloads (``aten.cumsum_.default``) whose functional overloads (the same
    name without the trailing underscore, the same overload name) are registered already: the
    functional result is computed, then written into ``self`` (same kind, family and dtypes)."""
    for op in _as_list(inplace_overloads):
        reg = REGISTRY[functional_of_inplace(op)]
        _add(op, reg.kind, inplace_variant(op, reg.impl), reg.family, dtypes=reg.dtypes)


def functional_of_inplace(op):
    """``aten.X_.Y`` -> ``aten.X.Y``."""
    name = op._schema.name.split("::")[1]
    if not name.endswith("_"):
        raise ValueError(f"{op} is not an in-place overload")
    return getattr(getattr(getattr(torch.ops, op.namespace), name[:-1]), op._overloadname)


def inplace_variant(op, impl: Callable) -> Callable:
    """The in-place overload ``op`` from the functional ``impl``: the result is computed in full
    (so inputs aliasing ``self`` are read before any write), then copied into ``self`` the way torch
    writes an in-place result (its shape must be self's; the dtype cast must be allowed; bf16/fp16
    rounded once)."""
    functional = functional_of_inplace(op)

    def run_inplace(func, args, kwargs):
        self = args[0]
        result = impl(functional, args, kwargs)
        if result.shape != self.shape:  # in place, self is never resized
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        return write_out(result, self)

    run_inplace.__module__ = impl.__module__
    run_inplace.__name__ = f"{getattr(impl, '__name__', 'impl')}_inplace_variant"
    return run_inplace


def register_passthrough(overloads: Iterable, reason: str, family: str = "passthrough") -> None:
    """Run these overloads natively; ``reason`` says why their result is bit-exactly defined."""
    if not reason or not reason.strip():
        raise ValueError("every passthrough registration needs a one-line reason")
    for op in _as_list(overloads):
        _add(op, "passthrough", run_native, family, reason, dtypes=("any",))


def register_refusal(overloads: Iterable, reason: str, family: str) -> None:
    """Refuse these overloads on purpose: the mode raises ``UnsupportedOpError`` with ``reason``
    (in strict mode; ``strict=False`` runs them natively and reports them, as any unsupported op)."""
    if not reason or not reason.strip():
        raise ValueError("every refusal needs the reason the user is shown")
    for op in _as_list(overloads):
        _add(op, "refusal", _refuse, family, reason, dtypes=())


def _refuse(func, args, kwargs):
    # Replaced in DISPATCH by repmode.kernels.load() with one that raises UnsupportedOpError (this
    # module is a leaf and cannot import repmode.errors).
    raise NotImplementedError(f"{func}: refusals raise once repmode.kernels.load() has run")


def overloads_named(*names: str) -> list:
    """Resolve ``"aten.view.default"``-style names (any operator namespace), skipping those this
    torch lacks. Names stay written out in full, so a grep for an overload finds its line."""
    found = []
    for name in names:
        ns, op, overload = name.split(".")
        packet = getattr(getattr(torch.ops, ns), op, None)
        if packet is not None and overload in packet.overloads():
            found.append(getattr(packet, overload))
    return found


def registered() -> list[Registration]:
    """Every registration made so far, sorted by overload name (``repmode.registrations()`` loads the
    kernel families first)."""
    return sorted(REGISTRY.values(), key=lambda r: r.name)


# ---- out= overloads, derived from the functional implementation -----------------------------

def _out_names(op) -> tuple[str, ...]:
    return tuple(a.name for a in op._schema.arguments if a.is_out)


def out_variant(op, impl: Callable) -> Callable:
    """The implementation of the ``out=`` overload ``op`` from the functional ``impl``: the
    functional overload (the same schema without its out arguments) computes the result, which is
    then written into the out tensors the way torch does (resized, cast; bf16/fp16 rounded once)."""
    names = _out_names(op)
    if not names:
        raise ValueError(f"{op} has no out= arguments")
    functional = functional_of(op)
    # A factory (no tensor argument: rand, randint, randperm, ...) creates its values in the out
    # tensor's dtype, as torch's out= factories do.
    factory = "dtype" in {a.name for a in functional._schema.arguments} and not any(
        "Tensor" in str(a.type) for a in functional._schema.arguments)

    def run_out(func, args, kwargs):
        outs = [kwargs[n] for n in names]
        rest = {k: v for k, v in kwargs.items() if k not in names}
        if factory and rest.get("dtype") is None:
            rest["dtype"] = outs[0].dtype
        result = impl(functional, args, rest)
        if len(outs) == 1:
            return write_out(result, outs[0])
        # a gradient the output mask left out (None) leaves its out tensor as it is
        return tuple(o if r is None else write_out(r, o) for r, o in zip(result, outs))

    run_out.__module__ = impl.__module__
    run_out.__name__ = f"{getattr(impl, '__name__', 'impl')}_out_variant"
    return run_out


_TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")


def functional_of(op):
    """The functional overload that ``op`` (an ``out=`` overload) is the out form of: the overload
    of the same operator whose arguments (names and types) are ``op``'s without the out ones."""
    names = _out_names(op)
    wanted = [(a.name, str(a.type)) for a in op._schema.arguments if a.name not in names]
    namespace = getattr(torch.ops, op.namespace)
    opname = op._schema.name.split("::")[1]
    # the functional form is an overload of the same operator, or (`reduce_scatter_tensor_out`) of the
    # operator named without the suffix
    packets = [getattr(namespace, n) for n in (opname, opname.removesuffix("_out")) if hasattr(namespace, n)]
    candidates = [getattr(p, o) for p in packets for o in p.overloads()]
    for cand in candidates:
        if cand is op or _out_names(cand):
            continue
        have = [(a.name, str(a.type)) for a in cand._schema.arguments]
        # a factory's functional form also takes the tensor options that out= replaces
        if have == wanted or [h for h in have if h[0] not in _TENSOR_OPTIONS] == wanted:
            return cand
    raise ValueError(f"{op}: no functional overload with the arguments {wanted}")


LOW_PRECISION = (torch.bfloat16, torch.float16)
CANONICAL_LOW_NAN = {torch.bfloat16: 0x7FC0, torch.float16: 0x7E00}  # as int16 bit patterns


def round_to(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``x`` rounded once (to nearest even) to ``dtype``; for bf16/fp16 every NaN is written as the
    canonical pattern: torch's conversion keeps a NaN's own bits in a pattern that differs between
    its CPU paths (0xFFFF for bf16 here) and GPUs."""
    return canonical_low_nans_(x.to(dtype))


def canonical_low_nans_(y: torch.Tensor) -> torch.Tensor:
    """Write every NaN of a bf16/fp16 tensor ``y`` as the canonical pattern, in place (other dtypes
    are left as they are); returns ``y``."""
    nan = CANONICAL_LOW_NAN.get(y.dtype)
    if nan is not None:
        is_nan = torch.isnan(y)
        if bool(is_nan.any()):
            y.view(torch.int16).masked_fill_(is_nan, nan)
    return y


def write_out(result: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Copy a computed result into a user's ``out=`` tensor the way torch does (resize, cast)."""
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    if not torch.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type {out.dtype}")
    if out.shape != result.shape:
        out.resize_(result.shape)
    if out.dtype in LOW_PRECISION and result.dtype != out.dtype and result.is_floating_point():
        result = round_to(result, out.dtype)
    out.copy_(result)
    return out
