"""``repmode.trace``: record a digest of every op's outputs, to find where two runs part ways.

A trace is a JSON-lines file (gzip-compressed when the name ends in ``.gz``; format in
docs/trace.md): a header line, then one record per op the dispatch mode ran, in order. The
digests are ``repmode.digest`` of each output, so traces from different machines, devices or
builds compare directly (``repmode.diff``). With ``native=True`` the ops run on torch's own
kernels through a pass-through mode (``repmode.enabled()`` blocks inside stay inert), so the
same script can be traced natively and under repmode and the traces compared op by op.

With a ``reference`` trace and ``keep_values=N``, the first N records whose outputs differ from
the reference's (same position) also keep their output tensors and the op's inputs in a side
file (``<trace>.values.pt``), for ``repmode.trace.replay`` and for value differences in ``diff``.
That file is read back with ``torch.load(weights_only=True)`` (``load_values``): it holds tensors
and plain data only, so a values file from elsewhere cannot run code when loaded.
"""
from __future__ import annotations

import contextlib
import gzip
import json
import os
import pickle
import platform
import re
import sys
import zlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .._callsite import user_call_site
from ..digest import tensor_digest
from ..mode import Session, _has_decomposition, active_mode
from ..registry import DISPATCH, run_native

FORMAT = "repmode-trace"
FORMAT_VERSION = 1


class TraceFileError(ValueError):
    """A trace (or its values side file) that is missing, unreadable, truncated or not a trace; or a
    trace that cannot be written. The message is one line naming the file (the CLI prints it, exit 2)."""


def _why_unreadable(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, EOFError):
        return "truncated: the compressed stream ends early (the run stopped while tracing?)"
    if isinstance(exc, gzip.BadGzipFile):
        return "not gzip-compressed, though its name ends in .gz"
    if isinstance(exc, zlib.error):
        return f"corrupt compressed data ({exc})"
    if isinstance(exc, UnicodeDecodeError):
        return "not a repmode trace (not UTF-8 text)"
    if isinstance(exc, OSError):
        return f"cannot read it: {exc.strerror or exc}"
    return f"cannot read it: {exc}"


def _open(path: str, mode: str):
    if str(path).endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def values_path(path: str) -> str:
    return str(path) + ".values.pt"


def _flat_outputs(out) -> list:
    if isinstance(out, (list, tuple)):
        return [x for item in out for x in _flat_outputs(item)]
    return [out]


# Ops whose outputs are uninitialised memory: recorded without a digest (it would differ run to run).
_UNINITIALISED = ("aten.empty.", "aten.empty_like.", "aten.empty_strided.", "aten.new_empty.",
                  "aten.new_empty_strided.", "aten.empty_permuted.")


def _describe(value, uninitialised: bool = False) -> dict:
    if isinstance(value, torch.Tensor) and uninitialised:
        return {"uninitialised": True, "shape": list(value.shape), "dtype": str(value.dtype).replace("torch.", ""),
                "device": value.device.type}
    if isinstance(value, torch.Tensor):
        return {"digest": tensor_digest(value), "shape": list(value.shape),
                "dtype": str(value.dtype).replace("torch.", ""),
                "device": value.device.type}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": repr(value)}
    return {"object": type(value).__name__}  # e.g. a profiler handle: its identity means nothing


class SavedGenerator:
    """A torch.Generator argument of a kept op, by its state (generators do not pickle)."""

    def __init__(self, generator: torch.Generator):
        self.state = generator.get_state()

    def restore(self) -> torch.Generator:
        g = torch.Generator()
        g.set_state(self.state)
        return g


class SavedMemoryFormat:
    """A torch.memory_format argument of a kept op (``clone(memory_format=...)``), by its name:
    memory formats do not pickle."""

    def __init__(self, memory_format: torch.memory_format):
        self.name = str(memory_format).removeprefix("torch.")

    def restore(self) -> torch.memory_format:
        value = getattr(torch, self.name, None)
        if not isinstance(value, torch.memory_format):  # a crafted file names something else
            raise TraceFileError(f"a kept memory format names {self.name!r}, which is not a torch.memory_format")
        return value


# The only classes of repmode's own that a values file may hold; everything else in it must be what
# torch.load(weights_only=True) accepts (tensors, dtypes, devices, sizes, numbers, strings,
# lists, tuples, dicts). Loading never runs code from the file.
SAFE_GLOBALS = (SavedGenerator, SavedMemoryFormat)


def load_values(path: str) -> dict:
    """The values side file of the trace ``path`` (``{}`` when there is none), loaded with
    ``torch.load(weights_only=True)`` and only :data:`SAFE_GLOBALS` allowed besides torch's own
    plain types: a file holding anything else (a pickle that would call a function, build an
    arbitrary object) is refused with a TraceFileError, and nothing in it runs."""
    vp = values_path(path)
    if not os.path.exists(vp):
        return {}
    try:
        with torch.serialization.safe_globals(list(SAFE_GLOBALS)):
            kept = torch.load(vp, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as exc:
        # torch's weights_only unpickler names what it would not build: "Unsupported global: GLOBAL exec ..."
        refused = re.search(r"Unsupported global: GLOBAL ([\w.]+)", str(exc))
        if refused:
            raise TraceFileError(f"{vp}: refused: it holds {refused.group(1)}, and a repmode values file holds only "
                                 "tensors and plain data: this file was not written by repmode or was altered. "
                                 "Nothing in it was run") from None
        raise TraceFileError(f"{vp}: truncated or not a values file (not torch.save's format; nothing in it was "
                             "run)") from None
    except Exception as exc:  # truncated or foreign: OSError, EOFError, RuntimeError (not a zip), ...
        why = _why_unreadable(exc) if isinstance(exc, OSError) else "truncated or not a values file"
        raise TraceFileError(f"{vp}: {why}") from None
    if not isinstance(kept, dict) or not all(isinstance(k, int) and isinstance(v, dict) for k, v in kept.items()):
        raise TraceFileError(f"{vp}: not a repmode values file")
    return kept


def _detached_copy(obj):
    """Tensors in ``obj`` (nested lists/tuples/dicts) as detached CPU copies; other values as they are."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, torch.Generator):
        return SavedGenerator(obj)
    if isinstance(obj, torch.memory_format):
        return SavedMemoryFormat(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_detached_copy(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _detached_copy(v) for k, v in obj.items()}
    return obj


def read_trace(path: str) -> tuple[dict, list[dict]]:
    """``(header, records)`` of a trace file; the footer's fields (``ops``, ``threads`` at the end)
    are merged into the header as ``end_threads`` and ``complete``."""
    lines = []
    try:
        with _open(path, "r") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    lines.append(json.loads(line))
    except json.JSONDecodeError:
        if lines:
            header_seen = isinstance(lines[0], dict) and lines[0].get("format") == FORMAT
        else:
            header_seen = f'"{FORMAT}"' in line
        kind = "truncated or corrupt" if header_seen else "not a repmode trace"
        raise TraceFileError(f"{path}: {kind} (line {number} is not a JSON record)") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise TraceFileError(f"{path}: {_why_unreadable(exc)}") from None
    if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != FORMAT:
        raise TraceFileError(f"{path} is not a repmode trace (no '{FORMAT}' header line)")
    if lines[0].get("version", 0) > FORMAT_VERSION:
        raise TraceFileError(f"{path} has trace format version {lines[0]['version']}; this repmode reads up to "
                             f"{FORMAT_VERSION}")
    header, records = dict(lines[0]), lines[1:]
    header["complete"] = bool(records) and records[-1].get("footer", False)
    if header["complete"]:
        header["end_threads"] = records.pop()["threads"]
    return header, records


class Tracer:
    """Writes one record per op. ``run`` is called by the dispatch mode in place of the op's impl."""

    def __init__(self, path: str, native: bool, reference: str | None = None, keep_values: int = 0):
        if keep_values and reference is None:
            raise ValueError("keep_values needs a reference trace: the values kept are those of the ops whose "
                             "outputs differ from the reference's")
        self.path = str(path)
        self.seq = 0
        self.reference = read_trace(reference)[1] if reference is not None else None
        self.keep_left = int(keep_values)
        self.kept: dict[int, dict] = {}
        try:
            self.file = _open(self.path, "w")
        except OSError as exc:
            raise TraceFileError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None
        from .._ext import cpu_isa
        from ..version import NUMERICS_VERSION, __version__

        header = {"format": FORMAT, "version": FORMAT_VERSION, "mode": "native" if native else "repmode",
                  "repmode": __version__, "numerics_version": NUMERICS_VERSION, "torch": torch.__version__,
                  "python": platform.python_version(), "machine": platform.machine(), "cpu_isa": cpu_isa(),
                  "threads": torch.get_num_threads(), "argv": sys.argv, "values_sampled": False}
        self.file.write(json.dumps(header) + "\n")

    def run(self, func, args, kwargs, impl):
        keeping = self.keep_left > 0
        random = keeping and torch.Tag.nondeterministic_seeded in func.tags
        # the inputs as they were: an in-place op changes them, a random op advances its generator
        before = _detached_copy((args, kwargs)) if keeping and (random or func._schema.is_mutable) else None
        rng = None
        if random:  # replay needs torch's CPU random state (repmode's random state too: repmode/rng.py)
            rng = {"torch": torch.get_rng_state()}
        out = impl(func, args, kwargs)
        self.seq += 1
        node = torch._C._current_autograd_node()
        name = str(func)
        fresh = name.startswith(_UNINITIALISED)
        record = {"seq": self.seq, "op": name, "phase": "forward" if node is None else "backward",
                  "site": user_call_site(2), "out": [_describe(x, fresh) for x in _flat_outputs(out)]}
        if node is not None:
            record["node"] = type(node).__name__
        self.file.write(json.dumps(record) + "\n")
        if self.keep_left > 0 and self._differs_from_reference(record):
            self.keep_left -= 1
            inputs = before if before is not None else _detached_copy((args, kwargs))
            self.kept[self.seq] = {"op": str(func), "args": inputs[0], "kwargs": inputs[1], "rng": rng,
                                   "outputs": _detached_copy(_flat_outputs(out))}
        return out

    def _differs_from_reference(self, record: dict) -> bool:
        if record["seq"] > len(self.reference):
            return True
        other = self.reference[record["seq"] - 1]
        return other["op"] != record["op"] or other["out"] != record["out"]

    def close(self) -> None:
        # the footer: thread count at the end (a script may set it after the trace began)
        self.file.write(json.dumps({"footer": True, "ops": self.seq, "threads": torch.get_num_threads()}) + "\n")
        self.file.close()
        if self.kept:
            torch.save(self.kept, values_path(self.path))
        elif os.path.exists(values_path(self.path)):
            os.remove(values_path(self.path))  # a stale side file of an earlier trace of that name


class NativeTraceMode(TorchDispatchMode):
    """Runs every op on torch's own kernel and records it; decomposes exactly where repmode would,
    so native and repmode traces of one script list the same ops."""

    repmode_native_trace = True  # repmode.enabled() blocks inside stay inert (see Session.__enter__)

    def __init__(self, tracer: Tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in DISPATCH and _has_decomposition(func):
            with self:
                return func.decompose(*args, **kwargs)
        return self.tracer.run(func, args, kwargs, run_native)


@contextlib.contextmanager
def trace(path, native: bool = False, strict: bool = True, reference: str | None = None, keep_values: int = 0):
    """Record every op the block runs into the trace file ``path`` (see the module docstring).

    ``native=False``: the block runs under repmode (``repmode.enabled(strict=strict)``, or the
    repmode block already open); ``native=True``: on torch's own kernels. Tracing never changes
    results. Yields the :class:`Tracer`."""
    tracer = Tracer(path, native, reference, keep_values)
    try:
        if native:
            with NativeTraceMode(tracer):
                yield tracer
            return
        outer = active_mode()
        if outer is not None:
            if outer.tracer is not None:
                raise RuntimeError("repmode.trace: this block is already being traced")
            outer.tracer = tracer
            try:
                yield tracer
            finally:
                outer.tracer = None
            return
        session = Session(strict=strict)
        session.mode.tracer = tracer
        with session:
            yield tracer
    finally:
        tracer.close()
