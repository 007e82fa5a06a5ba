"""``_foreach_*`` ops (optimizers with ``foreach=True``, ``clip_grad_norm_``, ``clip_grad_value_``):
each is its single-tensor op applied to the tensors of the list one after the other, through
repmode's own implementation of that op. So a foreach step gives the bits of the for-loop step.

Registered only where the single-tensor op is registered (this module is imported last); the
others stay unsupported and raise in strict mode like any unregistered op.
"""
from __future__ import annotations

import torch

from ..registry import DISPATCH, REGISTRY, register_composite
from ._common import call_registered

aten = torch.ops.aten


def _op(name: str, overload: str):
    packet = getattr(aten, name, None)
    if packet is None or overload not in packet.overloads():
        return None
    op = getattr(packet, overload)
    return op if op in DISPATCH else None


def _run(op):
    """Run a registered overload through repmode's implementation."""
    return lambda args, kwargs: call_registered(op, *args, **kwargs)


def _plan(single, calls):
    """``calls`` tagged with the single-tensor overload it runs (whose dtypes the foreach op takes)."""
    calls.single = single
    return calls


def _calls(base: str, overload: str):
    """How one ``_foreach_<base>.<overload>`` call becomes single-tensor calls: a function
    (args, kwargs) -> [(run, args_i, kwargs_i)], or None when repmode lacks the op."""
    inplace = base.endswith("_")
    stem = base[:-1] if inplace else base
    suffix = "_" if inplace else ""

    def per(op, build):
        if op is None:
            return None
        run = _run(op)
        return _plan(op, lambda args, kwargs: [(run, a, k) for a, k in build(args, kwargs)])

    def functional_then_copy(name: str, overload_: str, build):
        """An in-place foreach whose single-tensor op has no in-place form (maximum_, minimum_):
        the functional op, then copy_ into the tensor (exact)."""
        op, copy = _op(name, overload_), _op("copy_", "default")
        if op is None or copy is None:
            return None
        compute, write = _run(op), _run(copy)

        def run(a, k):
            return write((a[0], compute(a, k)), {})
        return _plan(op, lambda args, kwargs: [(run, a, k) for a, k in build(args, kwargs)])

    if stem in ("addcmul", "addcdiv"):  # (self, t1, t2, scalar|scalars|tensor of scalars)
        op = _op(stem + suffix, "default")

        def build(args, kwargs):
            self, t1, t2 = args[0], args[1], args[2]
            v = args[3] if len(args) > 3 else kwargs.get("value", kwargs.get("scalars", kwargs.get("scalar", 1)))
            for i, t in enumerate(self):
                value = v if overload == "Scalar" else (float(v[i]) if overload == "Tensor" else v[i])
                yield (t, t1[i], t2[i]), {"value": value}
        return per(op, build)
    if stem == "lerp":  # (self, ends, weight|weights list|weights scalars)
        op = _op("lerp" + suffix, "Tensor" if overload == "List" else "Scalar")

        def build(args, kwargs):
            self, ends, w = args[0], args[1], args[2]
            for i, t in enumerate(self):
                yield (t, ends[i], w if overload == "Scalar" else w[i]), {}
        return per(op, build)
    if stem == "norm" and overload == "Scalar":
        op = _op("linalg_vector_norm", "default")

        def build(args, kwargs):
            order = args[1] if len(args) > 1 else kwargs.get("ord", 2)
            dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
            for t in args[0]:
                yield (t, order), ({"dtype": dtype} if dtype is not None else {})
        return per(op, build)
    if base == "copy_" and overload == "default":
        op = _op("copy_", "default")

        def build(args, kwargs):
            for t, s in zip(args[0], args[1]):
                yield (t, s), {k: v for k, v in kwargs.items() if k == "non_blocking"}
        return per(op, build)
    if base == "mm":  # (self, mat2): two lists
        op = _op("mm", "default")
        return per(op, lambda args, kwargs: (((a, b), {}) for a, b in zip(args[0], args[1])))
    if base == "copy":  # the functional copy is not a copy_ of self
        return None
    if overload == "default":  # unary
        op = _op(base, "default")
        return per(op, lambda args, kwargs: (((t,), {}) for t in args[0]))
    if stem == "pow":
        single = {"Scalar": "Tensor_Scalar", "ScalarList": "Tensor_Scalar", "List": "Tensor_Tensor"}.get(overload)
        if overload == "ScalarAndTensor":
            op = _op("pow", "Scalar")
            return per(op, lambda args, kwargs: (((args[0], e), {}) for e in args[1]))
        op = _op("pow" + suffix, single) if single else None
    elif stem in ("clamp_min", "clamp_max"):
        op = _op(stem + suffix, "Tensor" if overload == "List" else "default")
    elif stem in ("maximum", "minimum"):  # binary tensor form only: maximum.default
        op = _op(stem + suffix, "default") if overload == "List" else None
    else:
        op = _op(stem + suffix, {"List": "Tensor", "Tensor": "Tensor"}.get(overload, "Scalar"))

    def build(args, kwargs):
        self, other = args[0], args[1]
        for i, t in enumerate(self):
            o = other[i] if overload in ("List", "ScalarList") else other
            yield (t, o), dict(kwargs)
    if op is None and inplace and stem in ("maximum", "minimum") and overload == "List":
        return functional_then_copy(stem, "default", build)
    return per(op, build)


def _register_all() -> None:
    names = {}
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::_foreach_") and not (schema.overload_name or "").endswith("out"):
            names.setdefault(schema.name[len("aten::_foreach_"):], []).append(schema.overload_name or "default")
    for base, overloads in names.items():
        packet = getattr(aten, "_foreach_" + base)
        for overload in overloads:
            plan = _calls(base, overload)
            if plan is None:
                continue
            inplace = base.endswith("_")
            register_composite(getattr(packet, overload), REGISTRY[plan.single].dtypes)(_make_impl(plan, inplace))


def _make_impl(plan, inplace: bool):
    def foreach(func, args, kwargs):
        results = [run(a, k) for run, a, k in plan(args, kwargs)]
        return None if inplace else results
    return foreach


_register_all()
