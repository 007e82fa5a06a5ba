"""Tell the user when torch.compile'd code runs inside ``repmode.enabled()``.

Dynamo does not compile a frame while a dispatch mode is active: it skips it, and the code
runs eagerly, every op through repmode — reproducible, but without the compile speed-up, and
silently. Dynamo reports each such skip only as a DEBUG record on its
``torch._dynamo.convert_frame`` logger ("skipping: ... non-infra torch dispatch mode present
..."), so while a block is open repmode lowers that logger's level to DEBUG, turns the first
such record into a :class:`CompiledRegionWarning`, and drops every record the logger would not
have emitted at its own level (so no debug output appears that the user did not ask for).
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import warnings

from ._callsite import user_frame
from .errors import CompiledRegionWarning

_LOGGER = "torch._dynamo.convert_frame"
_MARK = "dispatch mode"


# Blocks open on several threads share the logger: the first to open saves the user's level, the
# last to close restores it (saving and restoring per block let concurrent blocks leave the
# logger at DEBUG for good), and each block's filter only warns about its own thread's frames.
_lock = threading.Lock()
_open_blocks = 0
_saved_level = logging.NOTSET
_user_level = logging.WARNING


class _SkipNotice(logging.Filter):
    def __init__(self, user_level: int):
        super().__init__()
        self.user_level = user_level
        self.warned = False
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        if (not self.warned and record.thread == self.thread and record.levelno == logging.DEBUG
                and _MARK in record.getMessage()):
            self.warned = True
            filename, line = user_frame(2)
            warnings.warn_explicit(
                f"repmode: the torch.compile'd {_compiled_name(record)} runs eagerly inside repmode.enabled() "
                "(Dynamo does not compile while a dispatch mode is active): every op runs through repmode, "
                "reproducibly, without the compile speed-up.", CompiledRegionWarning, filename, line,
                module="repmode")
        return record.levelno >= self.user_level


_EVAL_FRAME = os.path.join("torch", "_dynamo", "eval_frame.py")


def _compiled_name(record: logging.LogRecord) -> str:
    """``function 'affine'`` or ``module 'Net'``: what the user passed to torch.compile.

    The skip record names the code object Dynamo declined, which for a compiled module (or a
    compiled function's wrapper) is torch's own ``inner`` or ``_call_impl``; the callable the user
    compiled is the ``fn`` of the innermost ``compile_wrapper`` frame of Dynamo's eval_frame.py
    (for a module, its bound ``_call_impl``, or torch's ``wrap_inline`` around the module), which
    is on the stack while the record is filtered. Falls back to the record's code name."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "compile_wrapper" and frame.f_code.co_filename.endswith(_EVAL_FRAME):
            fn = _unwrap(frame.f_locals.get("fn"))
            owner = fn if _is_module(fn) else getattr(fn, "__self__", None)
            if owner is not None and _is_module(owner):
                return f"module {type(owner).__name__!r}"
            name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
            if name:
                return f"function {name.rpartition('<locals>.')[2]!r}"  # 'affine', 'Trainer.step
            break
        frame = frame.f_back
    code_name = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
    return f"function {code_name!r}"


def _unwrap(fn):
    """Through torch's own wrappers (Dynamo's ``wrap_inline`` around a module's call): by
    ``__wrapped__``, or the callable a torch closure holds."""
    for _ in range(8):
        inner = getattr(fn, "__wrapped__", None)
        if inner is None and getattr(fn, "__module__", "").startswith("torch.") and getattr(fn, "__closure__", None):
            inner = next((c.cell_contents for c in fn.__closure__ if callable(c.cell_contents)), None)
        if inner is None:
            return fn
        fn = inner
    return fn


def _is_module(obj) -> bool:
    nn = sys.modules.get("torch.nn")
    return nn is not None and isinstance(obj, nn.Module)


class CompileNotice:
    """Installed while the outermost repmode block is open (see ``Session``)."""

    def __init__(self):
        self._logger = logging.getLogger(_LOGGER)
        self._filter = None

    def __enter__(self):
        global _open_blocks, _saved_level, _user_level
        with _lock:
            if _open_blocks == 0:
                _saved_level, _user_level = self._logger.level, self._logger.getEffectiveLevel()
            _open_blocks += 1
            self._filter = _SkipNotice(_user_level)
            self._logger.addFilter(self._filter)
            self._logger.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc):
        global _open_blocks
        with _lock:
            self._logger.removeFilter(self._filter)
            _open_blocks -= 1
            if _open_blocks == 0:
                self._logger.setLevel(_saved_level)
        return False


def forget_after_fork() -> None:
    """In a process forked inside a block (which leaves it, see repmode.mode): no block is open here,
    so take the filters off the logger and give it back the user's level."""
    global _open_blocks
    logger = logging.getLogger(_LOGGER)
    for f in [f for f in logger.filters if isinstance(f, _SkipNotice)]:
        logger.removeFilter(f)
    if _open_blocks:
        logger.setLevel(_saved_level)
    _open_blocks = 0
