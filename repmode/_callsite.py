"""Find the first frame of user code: outside torch, repmode and Python's standard library."""
from __future__ import annotations

import os
import sys
import sysconfig

import torch

_SKIP_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (torch,)
) + (os.path.dirname(os.path.abspath(__file__)) + os.sep,)
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def _is_library_frame(filename: str) -> bool:
    if filename.startswith(_SKIP_DIRS) or filename.startswith("<frozen"):
        return True
    # the standard library (contextlib, logging, runpy ...), but not packages installed beneath it
    return filename.startswith(_STDLIB) and "-packages" + os.sep not in filename


def user_frame(skip: int = 1) -> tuple[str, int]:
    """``(file, line)`` of the innermost frame that belongs to neither torch, repmode nor the stdlib."""
    frame = sys._getframe(skip)
    while frame is not None:
        if not _is_library_frame(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def user_call_site(skip: int = 1) -> str:
    """``file:line`` of the innermost frame of user code."""
    filename, line = user_frame(skip + 1)
    return f"{filename}:{line}"
