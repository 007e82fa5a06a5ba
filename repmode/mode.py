"""The dispatch mode: every aten call inside ``repmode.enabled()`` comes through here.

Flow of one op: ``__torch_dispatch__`` looks the overload up in ``registry.DISPATCH`` (one
dict hit) and calls its implementation. An unregistered CompositeImplicitAutograd op (seen
under ``torch.inference_mode``) is decomposed so that its parts come back through the mode.
Anything else is unsupported: strict mode raises, non-strict runs it natively and records it.
"""
from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack, _pop_mode, _push_mode

from . import _compile_notice, _ext, errors, kernels
from ._callsite import user_frame
from ._compile_notice import CompileNotice
from .errors import (
    ForkedProcessWarning,
    ReproducibilityEnvironmentError,
    UnsupportedOpError,
    UnsupportedOpWarning,
    describe_inputs,
)
from .registry import DISPATCH, REGISTRY, run_native

_CompositeImplicit = torch._C.DispatchKey.CompositeImplicitAutograd
_decomposable: dict = {}


def _has_decomposition(func) -> bool:
    known = _decomposable.get(func)
    if known is None:
        known = torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), _CompositeImplicit)
        _decomposable[func] = known
    return known


_tensorless: dict = {}


def _touches_no_tensor(func) -> bool:
    """True for an overload whose schema has no tensor among its arguments or results: a query of
    library or runtime state (a custom op's ``cuda_version()`` run while a package imports inside
    the block), which computes no tensor values and so no bits. It runs natively, never refused."""
    known = _tensorless.get(func)
    if known is None:
        schema = func._schema
        known = not any("Tensor" in str(a.type) for a in [*schema.arguments, *schema.returns])
        _tensorless[func] = known
    return known


_MAX_INPUT_KINDS = 16  # distinct input descriptions kept per unsupported overload


def layout_refusal(func, args, kwargs) -> UnsupportedOpError | None:
    """The UnsupportedOpError for a registered kernel or composite that failed on a sparse, quantized
    or nested input, or None (a passthrough's own torch error stands). Only looked at after an
    implementation raised, so the hot path pays nothing for it."""
    reg = REGISTRY.get(func)
    if reg is None or reg.kind == "passthrough":
        return None  # torch's own kernel ran and raised: its error stands
    return errors.layout_refusal(func, args, kwargs, depth=3)


@dataclass
class UnsupportedRecord:
    """One unsupported overload seen with ``strict=False``."""

    overload: str
    count: int = 0
    first_call_site: str = ""
    inputs: set = field(default_factory=set)
    dtypes: set = field(default_factory=set)
    devices: set = field(default_factory=set)

    def as_dict(self) -> dict:
        return {"overload": self.overload, "count": self.count, "first_call_site": self.first_call_site,
                "dtypes": sorted(self.dtypes), "devices": sorted(self.devices), "inputs": sorted(self.inputs)}


class ReproducibleMode(TorchDispatchMode):
    """Routes aten overloads to repmode's registry. Use it through :func:`repmode.enabled`."""

    def __init__(self, strict: bool = True):
        super().__init__()
        self.strict = strict
        self.unsupported: dict[str, UnsupportedRecord] = {}
        # True under `repmode audit`: blocks the script opens are neither strict nor recorded apart
        self.auditing = False
        self.tracer = None  # a repmode.trace.Tracer while `repmode.trace` records this mode's ops
        self.left_by_fork = False  # True in a forked child, which runs natively (see _leave_blocks_in_child)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if _has_dispatching_subclass(types):
            return self._subclass(func, types, args, kwargs)
        impl = DISPATCH.get(func)
        if self.tracer is not None:
            return self._traced(func, args, kwargs, impl)
        if impl is None:
            return self._unregistered(func, args, kwargs)
        if self.strict:
            return self._strict(func, args, kwargs, impl)
        return self._non_strict(func, args, kwargs, impl)

    @staticmethod
    def _strict(func, args, kwargs, impl):
        try:
            return impl(func, args, kwargs)
        except UnsupportedOpError:
            raise
        except Exception as exc:  # costs nothing unless raised
            refusal = layout_refusal(func, args, kwargs)
            if refusal is None:
                raise
            raise refusal from exc

    def _subclass(self, func, types, args, kwargs):
        # repmode's kernels read tensor memory, and a subclass's may be missing (FakeTensor) or
        # not be its values (a wrapper): passing one to a kernel could crash the process.
        # FakeTensors carry shapes only, no values and so no bits: their ops run natively (shape
        # propagation under FakeTensorMode works inside or around repmode.enabled()).
        types = [t for t in types if _dispatches(t)]
        if all(issubclass(t, FakeTensor) for t in types):
            return run_native(func, args, kwargs)
        if all(_unwraps_and_redispatches(t) for t in types):
            return NotImplemented  # the subclass unwraps and calls the op again, on plain tensors
        names = ", ".join(sorted({t.__name__ for t in types}))
        if self.strict:
            raise errors.subclass_refusal(func, args, kwargs, names, depth=3)
        self._record(func, args, kwargs or {})
        return run_native(func, args, kwargs)

    def _non_strict(self, func, args, kwargs, impl):
        # A registered op refusing these inputs (a dtype, a device) is unsupported like an
        # unregistered one: recorded and run natively. Kernels refuse before writing anything.
        try:
            return impl(func, args, kwargs)
        except Exception as exc:
            if not isinstance(exc, UnsupportedOpError) and layout_refusal(func, args, kwargs) is None:
                raise
            self._record(func, args, kwargs or {})
            return run_native(func, args, kwargs)

    def _traced(self, func, args, kwargs, impl):
        if impl is None:
            if _has_decomposition(func):  # its parts come back through the mode and are traced
                return self._unregistered(func, args, kwargs)
            impl = lambda func, args, kwargs: self._unregistered(func, args, kwargs)  # noqa: E731
        else:  # the same strict / non-strict handling as untraced ops
            registered, run = impl, (self._strict if self.strict else self._non_strict)
            impl = lambda func, args, kwargs: run(func, args, kwargs, registered)  # noqa: E731
        return self.tracer.run(func, args, kwargs, impl)

    def _unregistered(self, func, args, kwargs):
        kwargs = kwargs or {}
        if _has_decomposition(func):
            with self:
                return func.decompose(*args, **kwargs)
        if _touches_no_tensor(func):
            return func(*args, **kwargs)
        if self.strict:
            raise errors.unregistered(func, args, kwargs, depth=3)
        self._record(func, args, kwargs)
        return func(*args, **kwargs)

    def _record(self, func, args, kwargs) -> None:
        name = str(func)
        record = self.unsupported.get(name)
        if record is None:
            filename, line = user_frame(2)
            record = self.unsupported[name] = UnsupportedRecord(name, first_call_site=f"{filename}:{line}")
            warnings.warn_explicit(
                f"repmode: {name} has no reproducible implementation; ran it natively (strict=False)",
                UnsupportedOpWarning, filename, line, module="repmode",
            )
        record.count += 1
        if len(record.inputs) < _MAX_INPUT_KINDS:
            record.inputs.add(describe_inputs(args, kwargs))
        for t in errors.tensors_in(list(args) + list(kwargs.values())):
            record.dtypes.add(str(t.dtype).replace("torch.", ""))
            record.devices.add(t.device.type)


class BackwardCover:
    """Makes the backward of what a block computed run through the block's mode, also when the
    backward starts after the block has closed (``loss.backward()`` outside the ``with``).

    While the outermost block is open, tensors autograd saves for backward go through saved-tensor
    hooks: pack keeps a detached alias and its version; unpack (in backward) refuses a tensor
    modified in place since (autograd's own check, which hooks would otherwise switch off) and,
    when no repmode mode is active on the thread, pushes the block's mode. The autograd engine
    restores the thread's dispatch modes after each node, so the mode covers exactly the nodes that
    saved a tensor inside the block; nodes created outside it run as they would. A node that saves
    no tensor (sums, views, additions, multiplication by a Python number) runs natively: its
    backward is data movement or one IEEE operation per element. docs/semantics.md "Backward
    outside the block"."""

    def __init__(self, mode: "ReproducibleMode"):
        self.mode = mode
        self.hooks = None

    def __enter__(self):
        try:
            self.hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
            self.hooks.__enter__()
        except RuntimeError:  # saved-tensor hooks disabled here (a framework's region): not covered
            self.hooks = None
        return self

    def __exit__(self, *exc):
        if self.hooks is not None:
            self.hooks.__exit__(*exc)
            self.hooks = None
        return False

    @staticmethod
    def _pack(tensor):
        # A tensor with a grad_fn is kept as a detached alias (same storage and version counter): a
        # saved output holding its own grad_fn would keep the graph alive forever. The alias is made
        # below the dispatch modes, so the block's mode (and a trace) never sees this bookkeeping.
        # Leaves (parameters, inputs) hold no node: kept as they are (the cheap path, ~0.2 us).
        if tensor.grad_fn is None:
            return tensor, tensor._version
        if type(tensor) is torch.Tensor:
            with torch._C._DisableTorchDispatch():
                return tensor.detach(), tensor._version
        return tensor.detach(), tensor._version

    def _unpack(self, packed):
        tensor, version = packed
        if tensor._version != version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{tensor.type()} {list(tensor.shape)}] is at version {tensor._version}; expected version "
                f"{version} instead (saved inside a repmode block)")
        if torch._C._current_graph_task_id() != -1 and active_mode() is None and not self.mode.left_by_fork:
            _push_mode(self.mode)  # until this node's backward ends (the engine restores the modes)
        return tensor


class Session(contextlib.ContextDecorator):
    """What :func:`repmode.enabled` returns: a context manager and decorator with a report."""

    def __init__(self, strict: bool = True, seed: int | None = None, audit: bool = False):
        self.strict = strict
        self.seed = seed
        self.mode = ReproducibleMode(strict=strict)
        self.mode.auditing = audit
        self._entered: list = []  # per __enter__: this block's CompileNotice, or the outer mode's settings
        self._covers: list = []  # per outermost __enter__: its BackwardCover

    def __enter__(self) -> "Session":
        kernels.load()
        check_environment()
        if self.seed is not None:
            torch.manual_seed(self.seed)
        outer = active_mode()
        if outer is None and _native_trace_active():
            # `repmode trace --native` records torch's own kernels: blocks inside stay inert
            self._entered.append("inert")
        elif outer is None:
            notice = CompileNotice().__enter__()
            self._entered.append(notice)
            self.mode.__enter__()
            self._covers.append(BackwardCover(self.mode).__enter__())
        else:
            # A block inside a block: the mode already active keeps handling every op (a second
            # mode would also see the ops repmode's kernels issue), with this block's strictness
            # and report, except under `repmode audit`, whose settings win.
            self._entered.append((outer, outer.strict, outer.unsupported))
            if not outer.auditing:
                outer.strict, outer.unsupported = self.strict, self.mode.unsupported
        return self

    def __exit__(self, *exc) -> bool:
        entered = self._entered.pop()
        if isinstance(entered, CompileNotice):
            self._covers.pop().__exit__(*exc)
        if self.mode.left_by_fork:
            pass  # a forked child continuing the parent's code: it left the block when it was forked
        elif isinstance(entered, CompileNotice):
            self.mode.__exit__(*exc)
            entered.__exit__(*exc)
        elif entered == "inert":
            pass
        else:
            outer, outer.strict, outer.unsupported = entered
        return False

    def report(self) -> list[UnsupportedRecord]:
        """Every unsupported overload run natively (``strict=False``), in order of first use."""
        return list(self.mode.unsupported.values())

    def report_text(self) -> str:
        return format_report(self.report())


def format_report(records: list[UnsupportedRecord]) -> str:
    """The unsupported overloads as a text table (what ``report_text`` and ``repmode audit`` print)."""
    if not records:
        return "repmode: no unsupported ops."
    rows = [("overload", "calls", "dtypes", "devices", "first call site")]
    rows += [(r.overload, str(r.count), ",".join(sorted(r.dtypes)) or "-", ",".join(sorted(r.devices)) or "-",
              r.first_call_site) for r in records]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [f"repmode: {len(records)} unsupported op(s) ran natively (not reproducible):"]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4])
    return "\n".join(lines)


def enabled(strict: bool = True, seed: int | None = None, audit: bool = False) -> Session:
    """Run every aten op inside the block through repmode's reproducible kernels.

    ``strict=True`` raises :class:`UnsupportedOpError` on an op with no reproducible
    implementation; ``strict=False`` runs it natively, warns once per overload and records it
    (see ``.report()``). ``seed`` calls ``torch.manual_seed(seed)`` on entry: torch's CPU
    generator keys every random op inside the block (each draws its Philox key from it;
    repmode/rng.py). ``audit=True`` (with ``strict=False``) makes this block's settings win
    over blocks opened inside it: they neither raise nor keep their own report, so the report
    lists everything the code inside reaches (what ``repmode audit`` and ``pytest
    --repmode-audit`` use).
    Backward passes are covered wherever they start: inside the block, or after it for the
    graph it recorded (see :class:`BackwardCover`).
    """
    if audit and strict:
        raise ValueError("repmode.enabled(audit=True) records unsupported ops: it needs strict=False")
    return Session(strict=strict, seed=seed, audit=audit)


def active_mode() -> ReproducibleMode | None:
    """The repmode mode handling ops on this thread, if any."""
    for m in _get_current_dispatch_mode_stack():
        if isinstance(m, ReproducibleMode):
            return m
    return None


# ---- processes forked inside a block ------------------------------------------------------------
# A forked child starts with a copy of the forking thread's dispatch mode stack, so without this it
# would run inside a block it never opened and can never close: a DataLoader worker under the
# 'fork' start method raised UnsupportedOpError in strict mode (or ran half through repmode),
# while the same worker under 'spawn' or 'forkserver' runs natively. The child leaves the block
# instead: its ops run natively, like those of a thread started inside a block. The first child a
# process forks inside a block says so once (ForkedProcessWarning); later ones stay quiet.

FORK_NOTE = (
    "repmode: this process was forked inside repmode.enabled() (a DataLoader worker with the 'fork' start "
    "method, or os.fork / multiprocessing): it does not inherit the block, so its ops run natively, as a thread "
    "started inside a block does, and are not covered by repmode's guarantee (collating and indexing are exact "
    "data movement anyway). To make worker-side random work repeatable, seed it per worker: DataLoader seeds each "
    "worker's torch generator with base_seed + worker_id, base_seed drawn in the parent (seed the parent, or pass "
    "generator=); seed other libraries in worker_init_fn. To make the worker's arithmetic reproducible across "
    "hardware too, open `with repmode.enabled():` inside it (e.g. in Dataset.__getitem__)."
)
_fork_noted = False  # set in a process once it has forked inside a block: its first child warned


def _blocks_on_this_thread() -> list[ReproducibleMode]:
    return [m for m in _get_current_dispatch_mode_stack() if isinstance(m, ReproducibleMode)]


def _leave_blocks_in_child() -> None:
    """os.register_at_fork(after_in_child=...): take repmode's modes off the (only) thread's stack."""
    global _fork_noted
    ours = _blocks_on_this_thread()
    if not ours:
        return
    stack = _get_current_dispatch_mode_stack()
    if len(ours) == 1 and stack[-1] is ours[0]:
        ours[0].__exit__(None, None, None)  # the usual case: also resets torch's "in a mode" flags
    else:  # other modes entered inside the block: lift them off, drop ours, put the others back
        for _ in stack:
            _pop_mode()
        for m in stack:
            if not isinstance(m, ReproducibleMode):
                _push_mode(m)
    for m in ours:
        m.left_by_fork = True
    _compile_notice.forget_after_fork()
    if not _fork_noted:
        _fork_noted = True
        try:
            filename, line = user_frame(2)
            warnings.warn_explicit(FORK_NOTE, ForkedProcessWarning, filename, line, module="repmode")
        except Exception:  # a warnings filter set to "error": no exception may leave a fork hook
            pass


def _note_fork_in_parent() -> None:
    global _fork_noted
    if not _fork_noted and _blocks_on_this_thread():
        _fork_noted = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_leave_blocks_in_child, after_in_parent=_note_fork_in_parent)


def _dispatches(t: type) -> bool:
    """A tensor subclass with its own __torch_dispatch__ (a wrapper, FakeTensor), whose memory may
    not hold its values; nn.Parameter, nn.Buffer and other plain subclasses hold real memory."""
    return t.__torch_dispatch__ is not torch.Tensor.__torch_dispatch__


_dispatching: dict = {}  # types tuple -> whether a subclass with its own __torch_dispatch__ is in it


_REDISPATCHING = {
    # the result of a functional collective, waited on before its first use
    ("torch.distributed._functional_collectives", "AsyncCollectiveTensor"),
    # DTensor (FSDP2's parameters, tensor parallelism): it propagates placements (metadata only),
    # runs the op on its local tensors, which come back to the mode, and moves data between
    # placements with functional collectives, which are registered (exact, or folded in rank order)
    ("torch.distributed.tensor", "DTensor"),
}


def _unwraps_and_redispatches(cls) -> bool:
    """Wrapper subclasses whose dispatch only unwraps its arguments and calls ops again, so every
    computation reaches repmode on plain tensors."""
    return (cls.__module__, cls.__name__) in _REDISPATCHING


def _has_dispatching_subclass(types) -> bool:
    known = _dispatching.get(types)  # one dict hit per op: the set of types seen is tiny
    if known is None:
        known = _dispatching[types] = any(_dispatches(t) for t in types)
    return known


def _native_trace_active() -> bool:
    return any(getattr(m, "repmode_native_trace", False) for m in _get_current_dispatch_mode_stack())


def check_environment() -> None:
    """Refuse to run when the CPU flushes subnormals: results would differ from IEEE-754."""
    if _ext.flush_denormal_active():
        raise ReproducibilityEnvironmentError(
            "repmode refuses to run while subnormal numbers are flushed to zero "
            "(torch.set_flush_denormal(True) or FTZ/DAZ set by another library): flushing changes "
            "results against IEEE-754 and differs between CPUs and GPUs. "
            "Call torch.set_flush_denormal(False) first."
        )
