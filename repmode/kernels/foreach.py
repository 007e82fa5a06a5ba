"""``_foreach_*`` ops (optimizers with ``foreach=True``, ``clip_grad_norm_``, ``clip_grad_value_``):
each is its single-tensor op applied to the tensors of the list one after the other, through
repmode's own implementation of that op. So a foreach step gives the bits of the for-loop step.

Registered only where the single-tensor op is registered (this module is imported last); the
others stay unsupported and raise in strict mode like any unregistered op.
"""
from __future__ import annotations

import torch

from ..registry import DISPATCH, REGISTRY, overloads_named, register_composite
from . import (  # noqa: F401  (registrations looked up here)
    elementwise,
    elementwise_more,
    integer,
    mathtail,
    matmul,
    passthrough,
    reduction,
    special,
)
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
        # pow's in-place overloads are named apart: pow_.Scalar / pow_.Tensor (the exponent's type)
        single = ({"Scalar": "Scalar", "ScalarList": "Scalar", "List": "Tensor"} if suffix else
                  {"Scalar": "Tensor_Scalar", "ScalarList": "Tensor_Scalar", "List": "Tensor_Tensor"}).get(overload)
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


# Every _foreach_ overload repmode runs, written out (grep finds each). The single-tensor overload
# each one calls must be registered; tests/families/foreach/test_foreach.py checks this list against the foreach
# overloads torch has whose single-tensor op repmode registers (plannable_overloads), so a newly
# registered single-tensor op is not forgotten here.
FOREACH_OVERLOADS = (
    "aten._foreach_abs.default", "aten._foreach_abs_.default", "aten._foreach_add.List",
    "aten._foreach_add.Scalar", "aten._foreach_add.ScalarList", "aten._foreach_add.Tensor",
    "aten._foreach_add_.List", "aten._foreach_add_.Scalar", "aten._foreach_add_.ScalarList",
    "aten._foreach_add_.Tensor", "aten._foreach_addcdiv.Scalar", "aten._foreach_addcdiv.ScalarList",
    "aten._foreach_addcdiv.Tensor", "aten._foreach_addcdiv_.Scalar", "aten._foreach_addcdiv_.ScalarList",
    "aten._foreach_addcdiv_.Tensor", "aten._foreach_addcmul.Scalar", "aten._foreach_addcmul.ScalarList",
    "aten._foreach_addcmul.Tensor", "aten._foreach_addcmul_.Scalar", "aten._foreach_addcmul_.ScalarList",
    "aten._foreach_addcmul_.Tensor", "aten._foreach_ceil.default", "aten._foreach_ceil_.default",
    "aten._foreach_clamp_max.List", "aten._foreach_clamp_max.Scalar", "aten._foreach_clamp_max.ScalarList",
    "aten._foreach_clamp_max_.List", "aten._foreach_clamp_max_.Scalar", "aten._foreach_clamp_max_.ScalarList",
    "aten._foreach_clamp_min.List", "aten._foreach_clamp_min.Scalar", "aten._foreach_clamp_min.ScalarList",
    "aten._foreach_clamp_min_.List", "aten._foreach_clamp_min_.Scalar", "aten._foreach_clamp_min_.ScalarList",
    "aten._foreach_clone.default", "aten._foreach_copy_.default", "aten._foreach_cos.default",
    "aten._foreach_cos_.default", "aten._foreach_div.List", "aten._foreach_div.Scalar",
    "aten._foreach_div.ScalarList", "aten._foreach_div.Tensor", "aten._foreach_div_.List",
    "aten._foreach_div_.Scalar", "aten._foreach_div_.ScalarList", "aten._foreach_div_.Tensor",
    "aten._foreach_erf.default", "aten._foreach_erf_.default", "aten._foreach_erfc.default",
    "aten._foreach_erfc_.default", "aten._foreach_exp.default", "aten._foreach_exp_.default",
    "aten._foreach_expm1.default", "aten._foreach_expm1_.default", "aten._foreach_floor.default",
    "aten._foreach_floor_.default", "aten._foreach_frac.default", "aten._foreach_frac_.default",
    "aten._foreach_lerp.List", "aten._foreach_lerp.Scalar",
    "aten._foreach_lerp.ScalarList", "aten._foreach_lerp_.List", "aten._foreach_lerp_.Scalar",
    "aten._foreach_lerp_.ScalarList", "aten._foreach_log.default", "aten._foreach_log1p.default",
    "aten._foreach_log1p_.default", "aten._foreach_log2.default", "aten._foreach_log2_.default",
    "aten._foreach_log_.default", "aten._foreach_max.default", "aten._foreach_maximum.List",
    "aten._foreach_maximum_.List", "aten._foreach_minimum.List", "aten._foreach_minimum_.List",
    "aten._foreach_mm.default", "aten._foreach_mul.List", "aten._foreach_mul.Scalar",
    "aten._foreach_mul.ScalarList", "aten._foreach_mul.Tensor", "aten._foreach_mul_.List",
    "aten._foreach_mul_.Scalar", "aten._foreach_mul_.ScalarList", "aten._foreach_mul_.Tensor",
    "aten._foreach_neg.default", "aten._foreach_neg_.default", "aten._foreach_norm.Scalar",
    "aten._foreach_pow.List", "aten._foreach_pow.Scalar", "aten._foreach_pow.ScalarAndTensor",
    "aten._foreach_pow.ScalarList", "aten._foreach_pow_.List", "aten._foreach_pow_.Scalar",
    "aten._foreach_pow_.ScalarList", "aten._foreach_reciprocal.default", "aten._foreach_reciprocal_.default",
    "aten._foreach_round.default", "aten._foreach_round_.default", "aten._foreach_rsqrt.default",
    "aten._foreach_rsqrt_.default", "aten._foreach_sigmoid.default", "aten._foreach_sigmoid_.default",
    "aten._foreach_sign.default", "aten._foreach_sign_.default", "aten._foreach_sin.default",
    "aten._foreach_sin_.default", "aten._foreach_sqrt.default", "aten._foreach_sqrt_.default",
    "aten._foreach_sub.List", "aten._foreach_sub.Scalar", "aten._foreach_sub.ScalarList",
    "aten._foreach_sub_.List", "aten._foreach_sub_.Scalar", "aten._foreach_sub_.ScalarList",
    "aten._foreach_tanh.default", "aten._foreach_tanh_.default", "aten._foreach_trunc.default",
    "aten._foreach_trunc_.default", "aten._foreach_zero_.default",
    # the math long tail (repmode/kernels/mathtail.py)
    "aten._foreach_acos.default", "aten._foreach_acos_.default", "aten._foreach_asin.default",
    "aten._foreach_asin_.default", "aten._foreach_atan.default", "aten._foreach_atan_.default",
    "aten._foreach_cosh.default", "aten._foreach_cosh_.default", "aten._foreach_log10.default",
    "aten._foreach_log10_.default", "aten._foreach_sinh.default", "aten._foreach_sinh_.default",
    "aten._foreach_tan.default", "aten._foreach_tan_.default",
    # the gamma family (repmode/kernels/special.py)
    "aten._foreach_lgamma.default", "aten._foreach_lgamma_.default",
)


def plannable_overloads() -> list[str]:
    """The ``_foreach_`` overloads of this torch whose single-tensor op repmode registers (out=
    forms excluded): what FOREACH_OVERLOADS should list."""
    found = []
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::_foreach_") and not (schema.overload_name or "").endswith("out"):
            base, overload = schema.name[len("aten::_foreach_"):], schema.overload_name or "default"
            if _calls(base, overload) is not None:
                found.append(f"aten._foreach_{base}.{overload}")
    return sorted(set(found))


def _register_all() -> None:
    for op in overloads_named(*FOREACH_OVERLOADS):
        base = op._schema.name[len("aten::_foreach_"):]
        plan = _calls(base, op._overloadname)
        if plan is None:
            raise RuntimeError(f"{op}: its single-tensor op is not registered (FOREACH_OVERLOADS is stale)")
        register_composite(op, REGISTRY[plan.single].dtypes)(_make_impl(plan, base.endswith("_")))


def _make_impl(plan, inplace: bool):
    def foreach(func, args, kwargs):
        results = [run(a, k) for run, a, k in plan(args, kwargs)]
        return None if inplace else results
    return foreach


_register_all()
