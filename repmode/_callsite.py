"""Find the first frame of user code: outside torch, repmode and the standard library's context helpers."""
from __future__ import annotations

import os
import sys

import torch

_SKIP_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (torch,)
) + (os.path.dirname(os.path.abspath(__file__)) + os.sep,)
_SKIP_FILES = ("contextlib.py", "<frozen")


def user_frame(skip: int = 1) -> tuple[str, int]:
    """``(file, line)`` of the innermost frame that belongs to neither torch nor repmode."""
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SKIP_DIRS) and not filename.startswith(_SKIP_FILES[1]) \
                and not filename.endswith(_SKIP_FILES[0]):
            return filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def user_call_site(skip: int = 1) -> str:
    """``file:line`` of the innermost frame of user code."""
    filename, line = user_frame(skip + 1)
    return f"{filename}:{line}"
