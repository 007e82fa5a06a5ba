"""Runs PyTorch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``)
through repmode's strict mode and classifies every OpInfo: the project's coverage yardstick.

For each OpInfo that supports float32 on the CPU, the first ``n_samples`` of its sample inputs
(drawn with a fixed seed, all materialised before anything runs, so sample ``i`` is the same
whatever ``n_samples`` is) are run

* natively (torch's default thread count), and
* inside ``repmode.enabled()`` (strict) at 1 and at 2 threads, and at 2 threads once more on
  non-contiguous copies (torch's ``SampleInput.noncontiguous()``: every tensor a strided view),
* and, where the OpInfo has an in-place variant (``x.op_(...)``) and the sample does not broadcast
  its input, that variant natively and in strict mode at 1 and 2 threads (forward only: phase
  ``inplace``),

each on fresh copies of the sample (same sizes and strides), forward and, where the OpInfo
supports autograd, backward of a fixed random cotangent (``torch.autograd.grad`` over every
differentiable tensor output, inside the same ``with`` block). The first sample and phase that
does not pass decides the OpInfo's status:

``pass``         every sample matched native and gave the same bits at 1 and 2 threads and for
                 non-contiguous inputs;
``unsupported``  repmode raised UnsupportedOpError (the aten op it names is recorded);
``error``        repmode raised any other exception where native ran;
``mismatch``     a repmode result differs from native: structure, shape or dtype, a value beyond
                 ``torch.testing.assert_close``'s default tolerances (float32: rtol 1.3e-6,
                 atol 1e-5; 0 for integer and bool) that is not closer to the exact result than
                 native's (below), or the NaN/inf pattern (strides are not compared);
``variance``     repmode's bits differ between 1 and 2 threads (or it raised at one count only), or
                 between contiguous and non-contiguous inputs (phase ``...@noncontiguous``; an
                 UnsupportedOpError or other exception there counts as unsupported or error; not
                 checked for the ``as_strided`` ops, which read their input's storage by definition,
                 nor where native torch raises on the non-contiguous sample).

Two kinds of output are compared with native for structure (shape, dtype) only, because native's
values are not a reference for them: ops that draw random numbers (an aten op tagged
``nondeterministic_seeded`` ran natively: repmode draws from its own Philox stream, see
docs/semantics.md "Random numbers"; their thread invariance is still checked, with the same seed
before every run) and the ``empty*`` ops (uninitialised memory: no values to compare at all).

**Closer to the exact result than native.** Native torch's float32 result is a reference for the
value, not the exact one: where repmode's canonical order is more accurate than native's, the two
can differ by more than ``assert_close``'s tolerances while repmode is the better answer. So a
floating-point output (or gradient) leaf beyond those tolerances still passes when all of this holds
(rule 6 of the project, "never less accurate than native", measured on the sample itself): the same
op run natively on the sample widened to float64 (the same cotangent, widened) gives a reference of
the same shape; repmode and native have the same NaN and infinity pattern and agree within the
tolerances wherever the reference is not finite; and repmode's largest absolute error against the
reference, over the elements where it is finite, is no larger than native's. A value further from
the reference than native's largest error stays a mismatch, and so does everything else above (the
leaf's message then starts with both errors). Results passed this way are counted in
``Result.closer_than_native``.

**Closer on average.** Two float32 results of about equal accuracy (e.g. two orders of the same sum)
are each the closer one on about half the draws: one sample cannot tell a systematic loss of
accuracy from a coin toss. So a floating result that fails the test above is measured again on
``REDRAWS`` (40) redraws of the same sample (``_redraw``: every float32 tensor replaced by one of
the same sizes and strides, drawn uniformly between the original's smallest and largest value, fixed
seed; new random cotangents): it passes when, for every floating output (or gradient), repmode's
mean largest error against the float64 reference is no larger than native's (counted in
``Result.closer_on_average``). Anything that makes the redraws inconclusive — an in-place result, a
float32 tensor with non-finite or constant values, a redraw on which native, repmode or the
reference raises, a result without a finite reference — leaves the mismatch standing; a mismatch's
message gives both means where the redraws were conclusive. A systematic loss (repmode less accurate
than native on most draws of the sample's shapes) stays a mismatch.

**Singular and eigenvectors** (the forward outputs of ``svd``, ``linalg.svd``, ``linalg.eigh``):
torch leaves each vector's sign open and LAPACK's signs follow no rule, so these are compared as
an equivalence class where torch's result is not unique — one sign per singular triplet applied to
``u_j`` and ``v_j`` together (one per eigenvector), then entry by entry as above; clusters of
(nearly) repeated values by their rotation-invariant part; zero singular values and
``full_matrices`` columns by the projector onto their span where that is unique — and repmode's
result is checked against its documented sign rule exactly, and for orthonormality. The rule and
why: tests/support/opinfo_gauge.py (and docs/semantics.md "Linear algebra").

A sample on which native torch itself raises is left out (recorded as ``native_failed``); its
backward is left out when native's backward raises.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import re
import sys
import time
import types
import unittest
import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import repmode
from repmode import UnsupportedOpError

from . import opinfo_gauge as gauge
from .helpers import num_threads

CATEGORIES = ("pass", "unsupported", "error", "mismatch", "variance")
# the ops whose outputs are uninitialised memory: nothing to compare but shapes and dtypes (torch's
# own OpInfo tests skip their value checks: "Expected: empty is not comparable")
UNINITIALIZED = frozenset({"empty", "empty_like", "empty_permuted", "empty_strided", "new_empty",
                           "new_empty_strided"})
# the ops that read the storage behind their input, so that their result depends on its layout by
# definition (torch's own TestCommon.test_noncontiguous_samples expects them to fail): no layout check
READS_STORAGE = frozenset({"as_strided", "as_strided_copy", "as_strided_scatter"})
SEED = 20261126
MESSAGE_CHARS = 320


def load_op_db():
    """``op_db``, imported with as few side effects on this process as possible.

    torch's internal test package imports ``expecttest`` (a test dependency of torch that repmode's
    environment may lack; only its ``TestCase`` base class is needed to import the OpInfos, so a
    minimal stand-in is registered when it is missing), disables the mutation of ``torch.backends``
    flags outside ``with`` blocks and wraps TorchScript calls for its profiling tests: both are undone
    here so that the rest of a test session runs as before."""
    if "torch.testing._internal.common_methods_invocations" in sys.modules:
        return sys.modules["torch.testing._internal.common_methods_invocations"].op_db
    try:
        import expecttest  # noqa: F401
    except ImportError:
        shim = types.ModuleType("expecttest")
        shim.TestCase = type("TestCase", (unittest.TestCase,), {})
        shim.ACCEPT = False
        sys.modules["expecttest"] = shim
    script_calls = (torch._C.ScriptFunction.__call__, torch._C.ScriptMethod.__call__)
    flags = torch.backends.flags_frozen.__globals__  # the namespace torch.backends' flag functions read
    flag = flags.get("__allow_nonbracketed_mutation_flag", True)
    from torch.testing._internal.common_methods_invocations import op_db
    flags["__allow_nonbracketed_mutation_flag"] = flag
    torch._C.ScriptFunction.__call__, torch._C.ScriptMethod.__call__ = script_calls
    return op_db


def key(op) -> str:
    """An OpInfo's name in reports and in tests/system/opinfo_expected.txt: ``name`` or ``name:variant``."""
    return f"{op.name}:{op.variant_test_name}" if op.variant_test_name else op.name


def float32_cpu_ops():
    """The OpInfos that support float32 on the CPU, in op_db order (keys are unique)."""
    ops = [op for op in load_op_db() if op.supports_dtype(torch.float32, "cpu")]
    keys = [key(op) for op in ops]
    assert len(set(keys)) == len(keys), "OpInfo keys are not unique"
    return ops


@dataclasses.dataclass
class Result:
    key: str
    category: str = "pass"
    sample: int | None = None      # the first sample that did not pass
    phase: str = ""                # forward, backward, forward@noncontiguous, backward@noncontiguous, inplace
    aten_op: str = ""              # unsupported: the overload repmode refused
    message: str = ""              # the first line(s) of the exception or of the comparison
    samples_run: int = 0
    backward_run: int = 0          # samples whose backward was compared
    native_failed: int = 0
    closer_than_native: int = 0    # results (forward, backward, in-place) that passed only by being closer to float64
    closer_on_average: int = 0     # results that passed only by rule 6 over redraws of the sample (see above)
    native_message: str = ""       # why native torch raised on the first sample it refused
    random: bool = False
    seconds: float = 0.0

    def expected_line(self) -> str:
        detail = self.aten_op if self.category == "unsupported" else self.message
        return f"{self.key}  {self.category}  sample={self.sample}  {self.phase}  {detail}".rstrip()


class _Stop(Exception):
    def __init__(self, category, phase, message, aten_op=""):
        super().__init__(message)
        self.category, self.phase, self.message, self.aten_op = category, phase, message, aten_op


_ATEN_OP = re.compile(r"(?:implementation of|does not support|refuses) (\S+?)(?: with| \(| on |,|:|$)")


def refused_op(exc: UnsupportedOpError) -> str:
    """The overload an UnsupportedOpError names (every repmode refusal names it first)."""
    m = _ATEN_OP.search(str(exc))
    return m.group(1) if m else "?"


def one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


class _Recorder(TorchDispatchMode):
    """Notes whether a native run drew random numbers (an aten op tagged nondeterministic_seeded)."""

    def __init__(self):
        super().__init__()
        self.random = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if torch.Tag.nondeterministic_seeded in func.tags:
            self.random = True
        return func(*args, **(kwargs or {}))


def _non_overlapping_and_dense(t) -> bool:
    """Whether ``t``'s elements fill a block of memory exactly once (any dimension order)."""
    expected = 1
    for size, stride in sorted(zip(t.size(), t.stride()), key=lambda p: p[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def _copy_tensor(t):
    """A fresh leaf with ``t``'s values, sizes, strides and requires_grad (overlapping layouts, e.g.
    expanded tensors, cannot be written through: those become contiguous)."""
    if not isinstance(t, torch.Tensor):
        return t
    src = t.detach()
    if src.layout is torch.strided and not src.is_quantized and _non_overlapping_and_dense(src):
        out = torch.empty_strided(src.size(), src.stride(), dtype=src.dtype, device=src.device)
        out.copy_(src)
    else:
        out = src.clone()
    return out.requires_grad_(t.requires_grad)


def _fresh(sample):
    return sample.transform(_copy_tensor)


def _grad_inputs(sample):
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]


def _differentiable(outputs):
    leaves, _ = tree_flatten(outputs)
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]


def _run(op, sample, cotangents, backward: bool, noncontiguous=False):
    """One native run on fresh copies of ``sample``: (forward outputs, gradients or None)."""
    s = _fresh(sample)
    if noncontiguous:
        s = s.noncontiguous()
    torch.manual_seed(SEED)
    out = op(s.input, *s.args, **s.kwargs)
    if not backward:
        return out, None
    inputs = _grad_inputs(s)
    outs = _differentiable(s.output_process_fn_grad(out))
    grads = torch.autograd.grad(outs, inputs, grad_outputs=cotangents, allow_unused=True)
    return out, list(grads)


def _nan_equal(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _compare(name, got, want, values: bool, labels=None):
    """None if ``got`` matches ``want`` (torch.testing.assert_close's defaults, NaN positions equal,
    strides not compared; structure, shapes and dtypes only when ``values`` is False), else
    (why not, {index of each tensor leaf whose values differ: why}): the dict is empty for a
    difference in structure, type, shape, dtype or a non-tensor value, which no reference excuses."""
    got_leaves, got_spec = tree_flatten(got)
    want_leaves, want_spec = tree_flatten(want)
    if got_spec != want_spec:
        return f"{name}: structure {got_spec} vs native {want_spec}", {}
    differing = {}
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        where = f"{name} {labels[i]}" if labels else f"{name} {i}" if len(got_leaves) > 1 else name
        if isinstance(w, torch.Tensor) != isinstance(g, torch.Tensor):
            return f"{where}: {type(g).__name__} vs native {type(w).__name__}", {}
        if not isinstance(w, torch.Tensor):
            if values and not _nan_equal(g, w):
                return f"{where}: {g!r} vs native {w!r}", {}
            continue
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"{where}: {tuple(g.shape)} {g.dtype} vs native {tuple(w.shape)} {w.dtype}", {}
        if not values:
            continue
        why = _close(g, w)
        if why is not None:
            differing[i] = f"{where}: {why}"
    return (next(iter(differing.values())), differing) if differing else None


def _close(g, w):
    """None if ``g`` is within assert_close's default tolerances of ``w`` (NaN positions equal), else why not."""
    try:
        torch.testing.assert_close(g.detach(), w.detach(), equal_nan=True, check_stride=False,
                                   check_layout=True, check_device=True)
    except AssertionError as exc:
        return re.sub(r"Tensor-likes are not close!|Scalars are not close!|\(up to [^)]*\)|"
                      r"The failure occurred for item \[\d+\]", "", str(exc))
    return None


def _float64_reference(op, sample, cotangents, phase, transform=None):
    """The leaves of ``phase`` (forward, backward or inplace) of ``op`` run natively on ``sample``
    with every float32 tensor (and cotangent) widened to float64 (passed through ``transform``
    first, when given), or None if native torch raises."""
    def widen(t):
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
            return _copy_tensor(t).detach().double().requires_grad_(t.requires_grad)
        return t
    try:
        wide = sample.transform(widen)
        if phase == "inplace":
            result = _inplace_run(op, wide)
        else:
            backward = phase == "backward"
            cot64 = [c.double() if c.dtype == torch.float32 else c for c in cotangents] if backward else None
            out64, grads64 = _run(op, wide, cot64, backward)
            result = grads64 if backward else out64
        return tree_flatten(transform(result) if transform else result)[0]
    except Exception:  # noqa: BLE001 - no reference: nothing excuses the difference
        return None


def _errors(ref, g, w):
    """(repmode's, native's) largest absolute error against the float64 leaf ``ref`` over its finite
    elements, or None where ``ref`` is no reference for them: not a floating tensor of their shape,
    no finite element, or ``g`` and ``w`` differing in their NaN/inf pattern or, where ``ref`` is not
    finite, beyond the tolerances."""
    if not (isinstance(ref, torch.Tensor) and ref.shape == g.shape and ref.is_floating_point()
            and g.is_floating_point()):
        return None
    ref, g, w = ref.detach(), g.detach(), w.detach()
    finite = torch.isfinite(ref)
    if not finite.any():
        return None
    if not (torch.equal(torch.isnan(g), torch.isnan(w)) and torch.equal(torch.isinf(g), torch.isinf(w))
            and torch.equal(g[torch.isinf(g)], w[torch.isinf(w)])):
        return None
    if not finite.all() and _close(g[~finite], w[~finite]) is not None:
        return None

    def largest(x):
        return float((x.double()[finite] - ref[finite]).abs().nan_to_num(float("inf")).max())
    return largest(g), largest(w)


def _judge(op, sample, cotangents, phase, why, got, want, result, transform=None):
    """After ``_compare`` found ``why``: None if every differing leaf is no further from the float64
    reference than native's (the sample passes; counted in ``result.closer_than_native``), else
    the mismatch message, prefixed with both errors of the first differing leaf where known.
    ``transform``: what turned the outputs into ``got`` and ``want`` (the sign-invariant leaves of
    tests/support/opinfo_gauge.py), applied to the reference too."""
    message, differing = why
    if not differing:
        return message
    ref = _float64_reference(op, sample, cotangents, phase, transform)
    got_leaves, want_leaves = tree_flatten(got)[0], tree_flatten(want)[0]
    errors = {i: None if ref is None else _errors(ref[i], got_leaves[i], want_leaves[i]) for i in differing}
    if all(e is not None and e[0] <= e[1] for e in errors.values()):
        result.closer_than_native += 1
        return None
    averages = _redraw_errors(op, sample, cotangents, phase)
    if averages is not None and all(mine <= native for mine, native in averages.values()):
        result.closer_on_average += 1
        return None
    redraws = ""
    if averages is not None:  # the leaf with the largest ratio of the two means
        j, (mine, native) = max(averages.items(), key=lambda kv: kv[1][0] / max(kv[1][1], 1e-300))
        redraws = f"; mean over {REDRAWS} redraws, leaf {j}: repmode {mine:.3g}, native {native:.3g}"
    # the first leaf further from the reference than native's, else the first one without a reference
    i = next((i for i, e in errors.items() if e is not None and e[0] > e[1]), None)
    if i is None:
        return differing[next(i for i, e in errors.items() if e is None)]
    scale = float(ref[i].detach()[torch.isfinite(ref[i].detach())].abs().max())
    return (f"max error vs float64: repmode {errors[i][0]:.3g}, native {errors[i][1]:.3g} (|float64| up to "
            f"{scale:.3g}){redraws}; {differing[i]}")


REDRAWS = 40


def _redraw(sample, gen):
    """``sample`` with every float32 tensor replaced by one of the same sizes, strides and
    requires_grad whose values are drawn uniformly between the original's smallest and largest
    value; None if a float32 tensor has no such range (non-finite or constant values: structure
    that a redraw would not keep)."""
    ok = True

    def draw(t):
        nonlocal ok
        if not (isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.numel() > 1):
            return t
        v = t.detach()
        lo, hi = (float(x) for x in v.aminmax())
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            ok = False
            return t
        out = _copy_tensor(t).detach()
        out.copy_(torch.rand(out.shape, generator=gen, dtype=torch.float64).mul_(hi - lo).add_(lo))
        return out.requires_grad_(t.requires_grad)
    redrawn = sample.transform(draw)
    return redrawn if ok else None


def _redraw_errors(op, sample, cotangents, phase):
    """Rule 6 measured on the sample's distribution rather than on its one draw: for each floating
    leaf of ``phase`` (forward or backward, 1 thread), (repmode's, native's) mean over ``REDRAWS``
    redraws (``_redraw``, fixed seed) of the largest absolute error against the float64 reference;
    None where this says nothing: the in-place phase, a sample with nothing to redraw, or a redraw on
    which native, repmode or the reference raises or has no reference for a leaf."""
    if phase not in ("forward", "backward"):
        return None
    backward = phase == "backward"
    gen = torch.Generator().manual_seed(SEED)
    totals = {}
    for _ in range(REDRAWS):
        s = _redraw(sample, gen)
        if s is None:
            return None
        # a redraw keeps every shape, so the sample's cotangents give the new ones' shapes
        cot = [torch.randn(c.shape, generator=gen, dtype=torch.float64).to(c.dtype) for c in cotangents] \
            if backward else None
        try:
            out, grads = _run(op, s, cot, backward)
            mine, my_grads = _repmode_run(op, s, cot, backward, 1)
        except Exception:  # noqa: BLE001 - (_Stop included) a redraw outside the op's domain says nothing
            return None
        ref = _float64_reference(op, s, cot, phase)
        if ref is None:
            return None
        got, want = tree_flatten(my_grads if backward else mine)[0], tree_flatten(grads if backward else out)[0]
        for i, (r, g, w) in enumerate(zip(ref, got, want)):
            if isinstance(g, torch.Tensor) and g.is_floating_point():
                e = _errors(r, g, w)
                if e is None or not all(math.isfinite(x) for x in e):
                    return None
                t = totals.setdefault(i, [0.0, 0.0])
                t[0] += e[0]
                t[1] += e[1]
    return {i: (t[0] / REDRAWS, t[1] / REDRAWS) for i, t in totals.items()} or None


def _bit_view(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    if t.layout is not torch.strided:
        t = t.to_dense()
    flat = torch.empty((t.numel(),), dtype=t.dtype, device=t.device)
    flat.copy_(t.reshape(-1))
    return flat.view(torch.uint8)


def _bitwise(name, a, b, runs=("1 thread", "2 threads")):
    """None if ``a`` and ``b`` (two repmode runs) have the same structure and the same bits."""
    a_leaves, a_spec = tree_flatten(a)
    b_leaves, b_spec = tree_flatten(b)
    if a_spec != b_spec:
        return f"{name}: structure differs between {runs[0]} and {runs[1]}"
    for i, (x, y) in enumerate(zip(a_leaves, b_leaves)):
        where = f"{name} {i}" if len(a_leaves) > 1 else name
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return (f"{where}: {tuple(x.shape)} {x.dtype} with {runs[0]} vs {tuple(y.shape)} {y.dtype} "
                        f"with {runs[1]}")
            differ = int((_bit_view(x) != _bit_view(y)).sum())
            if differ:
                return (f"{where}: {differ} of {x.numel() * x.element_size()} bytes differ between {runs[0]} "
                        f"and {runs[1]}")
        elif not _nan_equal(x, y):
            return f"{where}: {x!r} with {runs[0]} vs {y!r} with {runs[1]}"
    return None


def _repmode_run(op, sample, cotangents, backward, threads, noncontiguous=False):
    """(outputs, grads) of one strict repmode run, or raises _Stop (unsupported / error); with
    ``noncontiguous``, on copies of the sample whose tensors are strided views (torch's
    ``SampleInput.noncontiguous()``: every other element of a buffer)."""
    suffix = "@noncontiguous" if noncontiguous else ""
    phase = "forward" + suffix
    with num_threads(threads):
        try:
            s = _fresh(sample)
            if noncontiguous:
                s = s.noncontiguous()
            with repmode.enabled():
                torch.manual_seed(SEED)
                out = op(s.input, *s.args, **s.kwargs)
                grads = None
                if backward:
                    phase = "backward" + suffix
                    grads = list(torch.autograd.grad(_differentiable(s.output_process_fn_grad(out)), _grad_inputs(s),
                                                     grad_outputs=cotangents, allow_unused=True))
        except UnsupportedOpError as exc:
            raise _Stop("unsupported", phase, one_line(exc), refused_op(exc)) from None
        except Exception as exc:  # noqa: BLE001 - every other failure under repmode is a defect
            raise _Stop("error", phase, one_line(f"{type(exc).__name__}: {exc}")) from None
    return out, grads


def _check_sample(op, sample, index, result):
    """Raises _Stop at the first thing in this sample that does not pass."""
    recorder = _Recorder()
    _fresh(sample)  # (a failure to copy a sample is the harness's, not native torch's: it propagates)
    try:
        with recorder:
            native_out, _ = _run(op, sample, None, backward=False)
    except Exception as exc:  # noqa: BLE001 - a sample native torch refuses says nothing about repmode
        result.native_failed += 1
        result.native_message = result.native_message or one_line(f"{type(exc).__name__}: {exc}")
        return
    result.samples_run += 1
    random = recorder.random
    result.random |= random
    values = not random and op.name not in UNINITIALIZED
    backward = bool(op.supports_autograd and _grad_inputs(sample)
                    and _differentiable(sample.output_process_fn_grad(native_out)))
    cotangents = None
    native_grads = None
    if backward:
        gen = torch.Generator().manual_seed(SEED + index)
        cotangents = []
        for t in _differentiable(sample.output_process_fn_grad(native_out)):
            c = torch.randn(t.shape, generator=gen, dtype=t.dtype if t.is_complex() else torch.float64)
            cotangents.append(c.to(t.dtype))
        try:
            native_out, native_grads = _run(op, sample, cotangents, backward=True)
        except Exception:  # noqa: BLE001 - native backward refused: compare the forward only
            backward = False
    runs = {}
    for threads in (1, 2):
        try:
            runs[threads] = _repmode_run(op, sample, cotangents, backward, threads)
        except _Stop as stop:
            if threads == 2:  # ran at 1 thread, raised at 2
                raise _Stop("variance", stop.phase, f"raised at 2 threads only: {stop.message}") from None
            raise
    (out1, grads1), (out2, grads2) = runs[1], runs[2]
    result.backward_run += backward
    ctx = (op, sample, values, result)
    _check_result(ctx, "forward output", "forward", cotangents, out1, native_out,
                  None if op.name in UNINITIALIZED else out2)
    if backward:
        _check_result(ctx, "gradient", "backward", cotangents, grads1, native_grads, grads2)
    _check_layout(op, sample, cotangents, backward, out2, grads2)
    _check_inplace(op, sample, values, result)


def _check_result(ctx, label, phase, cotangents, got, native, other):
    """``got`` (1 thread) against native torch's (assert_close, then the float64 judge: a mismatch),
    then, unless ``other`` is None, against ``other`` (2 threads) bit for bit (a variance)."""
    op, sample, values, result = ctx
    if values and phase == "forward" and gauge.applies(op.name, sample):
        why = _compare_gauged(ctx, label, got, native)
    else:
        why = _compare(label, got, native, values)
        why = why and _judge(op, sample, cotangents, phase, why, got, native, result)
    if why:
        raise _Stop("mismatch", phase, one_line(why))
    if other is not None:
        why = _bitwise(label, got, other)
        if why:
            raise _Stop("variance", phase, one_line(why))


def _compare_gauged(ctx, label, got, native):
    """Singular and eigenvectors, whose signs torch leaves open: tests/support/opinfo_gauge.py."""
    op, sample, values, result = ctx
    kind = gauge.GAUGED[op.name]
    why = _compare(label, got, native, values)  # structure, shapes and dtypes first
    if why and not why[1]:
        return why[0]
    if not (gauge.comparable(kind, native) and gauge.comparable(kind, got)):
        return why and _judge(op, sample, None, "forward", why, got, native, result)
    broken = gauge.checks(kind, got, native)
    if broken:
        return f"{label}: {broken}"

    def transform(out):
        return [t for _, t in gauge.leaves(kind, out, native)]
    got_leaves = gauge.leaves(kind, got, native)
    why = _compare(label, [t for _, t in got_leaves], transform(native), values, [n for n, _ in got_leaves])
    return why and _judge(op, sample, None, "forward", why, transform(got), transform(native), result, transform)


def _check_layout(op, sample, cotangents, backward, out2, grads2):
    """Layout invariance: the same bits from strided views of the same values (2 threads)."""
    if op.name in READS_STORAGE:
        return
    try:  # a layout native torch refuses (view_as_complex needs a unit last stride) is not compared
        _run(op, sample, None, backward=False, noncontiguous=True)
    except Exception:  # noqa: BLE001
        return
    out_nc, grads_nc = _repmode_run(op, sample, cotangents, backward, 2, noncontiguous=True)
    layouts = ("contiguous inputs", "non-contiguous inputs")
    if op.name not in UNINITIALIZED:
        why = _bitwise("forward output", out2, out_nc, layouts)
        if why:
            raise _Stop("variance", "forward@noncontiguous", one_line(why))
    if backward:
        why = _bitwise("gradient", grads2, grads_nc, layouts)
        if why:
            raise _Stop("variance", "backward@noncontiguous", one_line(why))


def _no_grad_copy(t):
    return _copy_tensor(t).detach() if isinstance(t, torch.Tensor) else t


def _inplace_run(op, sample, threads=None):
    """The in-place variant on fresh copies (no autograd): (returned value, the mutated input)."""
    s = sample.transform(_no_grad_copy)
    torch.manual_seed(SEED)
    if threads is None:
        out = op.inplace_variant(s.input, *s.args, **s.kwargs)
        return out, s.input
    phase = "inplace"
    with num_threads(threads):
        try:
            with repmode.enabled():
                torch.manual_seed(SEED)
                out = op.inplace_variant(s.input, *s.args, **s.kwargs)
        except UnsupportedOpError as exc:
            raise _Stop("unsupported", phase, one_line(exc), refused_op(exc)) from None
        except Exception as exc:  # noqa: BLE001
            raise _Stop("error", phase, one_line(f"{type(exc).__name__}: {exc}")) from None
    return out, s.input


def _check_inplace(op, sample, values, result):
    """The OpInfo's in-place variant (``x.op_(...)``, where it has one and the sample does not
    broadcast its input): the same checks as the forward, on the returned value and the mutated input."""
    if op.inplace_variant is None or sample.broadcasts_input or not isinstance(sample.input, torch.Tensor):
        return
    try:
        native = _inplace_run(op, sample)
    except Exception:  # noqa: BLE001 - e.g. a result dtype the input cannot hold
        return
    one, two = _inplace_run(op, sample, 1), _inplace_run(op, sample, 2)
    _check_result((op, sample, values, result), "in-place result", "inplace", None, one, native,
                  None if op.name in UNINITIALIZED else two)


def samples(op, n: int):
    """The first ``n`` float32 CPU samples of ``op`` (requires_grad where it supports autograd),
    drawn with a fixed seed and materialised before anything runs."""
    torch.manual_seed(SEED)
    gen = op.sample_inputs("cpu", torch.float32, requires_grad=op.supports_autograd)
    return list(itertools.islice(gen, n))


def run_opinfo(op, n_samples: int) -> Result:
    """The status of one OpInfo over its first ``n_samples`` samples (the process's RNG state and
    thread count are restored afterwards)."""
    result = Result(key(op))
    start = time.perf_counter()
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            drawn = samples(op, n_samples)
        except Exception as exc:  # noqa: BLE001
            result.message = one_line(f"no samples: {type(exc).__name__}: {exc}")
            drawn = []
        for i, sample in enumerate(drawn):
            try:
                _check_sample(op, sample, i, result)
            except _Stop as stop:
                result.category, result.sample, result.phase = stop.category, i, stop.phase
                result.message, result.aten_op = stop.message, stop.aten_op
                break
    result.seconds = time.perf_counter() - start
    return result


# ---- the checked-in list of OpInfos that do not pass (tests/system/opinfo_expected.txt) ----

@dataclasses.dataclass(frozen=True)
class Expected:
    key: str
    category: str
    sample: int
    phase: str
    detail: str

    def matches(self, r: Result) -> bool:
        """Unsupported: the same sample, phase and refused overload; error, mismatch and variance:
        the same category and sample (their messages are informative only)."""
        if (r.category, r.sample) != (self.category, self.sample):
            return False
        return self.category != "unsupported" or (r.phase, r.aten_op) == (self.phase, self.detail)


def parse_expected(text: str) -> dict[str, Expected]:
    entries = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 4)
        if len(parts) < 4 or parts[1] not in CATEGORIES[1:] or not parts[2].startswith("sample="):
            raise ValueError(f"opinfo_expected.txt line {n}: cannot read {line!r}")
        if parts[0] in entries:
            raise ValueError(f"opinfo_expected.txt line {n}: {parts[0]} listed twice")
        entries[parts[0]] = Expected(parts[0], parts[1], int(parts[2][len("sample="):]), parts[3],
                                     parts[4] if len(parts) > 4 else "")
    return entries


def expected_for(entry: Expected | None, n_samples: int) -> Expected | None:
    """What a run over the first ``n_samples`` samples should find, given the full run's entry: an
    OpInfo first stopped at a later sample passes on the first ``n_samples``."""
    if entry is None or entry.sample >= n_samples:
        return None
    return entry


def verdict(result: Result, entry: Expected | None, n_samples: int) -> str | None:
    """None if ``result`` is what the list says, else the failure message."""
    want = expected_for(entry, n_samples)
    if want is None:
        if result.category == "pass":
            return None
        return (f"{result.key}: new {result.category} (a regression, or a defect to record in "
                f"tests/system/opinfo_expected.txt): {result.expected_line()} — {result.message}")
    if result.category == "pass":
        which = "every sample" if n_samples >= 1 << 20 else f"its first {n_samples} sample(s)"
        return (f"{result.key} now passes on {which}: remove it from "
                f"tests/system/opinfo_expected.txt (listed as: {want.category} sample={want.sample} "
                f"{want.phase} {want.detail})")
    if want.matches(result):
        return None
    return (f"{result.key}: expected {want.category} sample={want.sample} {want.phase} {want.detail}, "
            f"got {result.expected_line()} — {result.message}; update tests/system/opinfo_expected.txt")


def totals(results) -> dict[str, int]:
    """OpInfos per status; a ``pass`` with no sample that native torch runs (the jiterator OpInfos:
    CUDA only) counts as ``not run``: nothing was compared."""
    counts = {c: 0 for c in CATEGORIES + ("not run",)}
    for r in results:
        counts["not run" if r.category == "pass" and r.samples_run == 0 else r.category] += 1
    return counts
