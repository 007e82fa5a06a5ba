"""Exceptions and warnings repmode raises, and the helpers that word their messages.

Every user-facing refusal names the overload, describes its inputs (dtype, shape, device,
layout) and points at the user's own line, so the message alone says what to change.
"""
from __future__ import annotations

import os

import torch

from ._callsite import user_call_site


class UnsupportedOpError(RuntimeError):
    """An aten op reached repmode that has no reproducible implementation.

    Raised in strict mode (the default) instead of silently running a kernel whose
    bits depend on the hardware, the thread count or the library version.
    """


class UnsupportedOpWarning(UserWarning):
    """Emitted once per overload when ``strict=False`` runs a native, non-reproducible op."""


class ReproducibilityEnvironmentError(RuntimeError):
    """The process is configured in a way that makes reproducible results impossible."""


class CompiledRegionWarning(UserWarning):
    """torch.compile'd code ran inside ``repmode.enabled()``: it runs eagerly, op by op, through repmode."""


class ForkedProcessWarning(UserWarning):
    """A process forked inside ``repmode.enabled()`` (a DataLoader worker under the ``fork`` start
    method) runs natively: it does not inherit the block. Shown once per parent process."""


AUDIT_HINT = ("To list every unsupported op your script reaches, run `python -m repmode audit your_script.py "
              "[args]` (or wrap it in `with repmode.enabled(strict=False) as rm:` and print `rm.report_text()`).")
PYTEST_AUDIT_HINT = ("To list every unsupported op your tests reach, run them with `pytest --repmode-audit` (each "
                     "test's body runs with strict=False and the summary lists its unsupported ops per test).")


def audit_hint() -> str:
    """How to list every unsupported op: ``pytest --repmode-audit`` while a test runs (pytest sets
    PYTEST_CURRENT_TEST during each test's setup, call and teardown), else ``repmode audit``."""
    return PYTEST_AUDIT_HINT if "PYTEST_CURRENT_TEST" in os.environ else AUDIT_HINT


def layout_name(t: torch.Tensor) -> str | None:
    """What makes ``t`` something other than a dense strided tensor, or None."""
    if t.is_nested:
        return "nested"
    if t.layout is not torch.strided:
        return {torch.sparse_coo: "sparse COO", torch.sparse_csr: "sparse CSR", torch.sparse_csc: "sparse CSC",
                torch.sparse_bsr: "sparse BSR", torch.sparse_bsc: "sparse BSC"}.get(t.layout, str(t.layout))
    if t.is_quantized:
        return f"quantized ({str(t.dtype).replace('torch.', '')})"
    return None


def describe_inputs(args, kwargs) -> str:
    """``float32[4, 3] cpu, float32[3] cpu, 2`` — the tensors' dtype/shape/device, other args briefly."""
    parts = []
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, torch.Tensor):
            dtype = str(a.dtype).replace("torch.", "")
            shape = f"nested[{a.size(0)}]" if a.is_nested else str(list(a.shape))
            kind = layout_name(a)
            parts.append(f"{dtype}{shape} {a.device}" + (f" {kind}" if kind and not a.is_nested else ""))
        elif isinstance(a, (list, tuple)) and any(isinstance(t, torch.Tensor) for t in a):
            parts.append("[" + describe_inputs(a, None) + "]")
        else:
            text = repr(a)
            parts.append(text if len(text) <= 40 else text[:37] + "...")
    return ", ".join(parts)


def tensors_in(values):
    """Every tensor in ``values``, looking one level into lists and tuples (recursively)."""
    for a in values:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from tensors_in(a)


def unsupported(func, args, kwargs, why: str, depth: int = 1) -> UnsupportedOpError:
    """The UnsupportedOpError for a registered op called with inputs repmode does not cover."""
    why = why.rstrip() if why.rstrip().endswith(".") else why.rstrip() + "."
    return UnsupportedOpError(
        f"repmode does not support {func} with these inputs ({describe_inputs(args, kwargs)}), called at "
        f"{user_call_site(depth)}: {why} {audit_hint()}"
    )


def unregistered(func, args, kwargs, depth: int = 2) -> UnsupportedOpError:
    """The UnsupportedOpError for an overload repmode has no implementation of."""
    return UnsupportedOpError(
        f"repmode has no reproducible implementation of {func} "
        f"(inputs: {describe_inputs(args, kwargs)}), called at {user_call_site(depth)}. "
        "Its native kernel is not guaranteed to give the same bits on other hardware, thread counts "
        f"or torch versions. {audit_hint()}"
    )


def refused(func, args, kwargs, reason: str, depth: int = 2) -> UnsupportedOpError:
    """The UnsupportedOpError for an overload repmode deliberately refuses (registry kind 'refusal')."""
    return UnsupportedOpError(
        f"repmode refuses {func} (inputs: {describe_inputs(args, kwargs)}), called at {user_call_site(depth)}: "
        f"{reason}"
    )


def layout_refusal(func, args, kwargs, depth: int = 2) -> UnsupportedOpError | None:
    """The UnsupportedOpError for an op that failed on a sparse, quantized or nested input
    (repmode's kernels read dense strided memory), or None when every input is dense."""
    kinds = sorted({k for k in (layout_name(t) for t in tensors_in(list(args) + list((kwargs or {}).values())))
                    if k})
    if not kinds:
        return None
    return UnsupportedOpError(
        f"repmode does not support {func} on {' and '.join(kinds)} tensors (inputs: {describe_inputs(args, kwargs)}), "
        f"called at {user_call_site(depth)}: repmode's kernels read dense strided memory only. Convert the input "
        "first (.to_dense(), .dequantize(), or the nested tensor's .unbind()) to run it reproducibly."
    )


def subclass_refusal(func, args, kwargs, names: str, depth: int = 2) -> UnsupportedOpError:
    return UnsupportedOpError(
        f"repmode does not support {func} on tensor subclasses ({names}; inputs: "
        f"{describe_inputs(args, kwargs)}), called at {user_call_site(depth)}: repmode's kernels run on "
        "plain torch.Tensor objects only. Run the subclass's computation on plain tensors, or use "
        "strict=False to run it natively and report it."
    )
