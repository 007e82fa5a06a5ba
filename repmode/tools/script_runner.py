"""Run a Python script or module the way ``python script.py`` / ``python -m module`` would, inside
whatever repmode context the caller has opened (``repmode audit``, ``repmode trace``)."""
from __future__ import annotations

import contextlib
import os
import runpy
import sys
import traceback


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # what the interpreter does with sys.exit("message")
    return 1


@contextlib.contextmanager
def _script_environment(argv: list[str], path_entry: str):
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv[:] = argv
    sys.path.insert(0, path_entry)
    try:
        yield
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path


def _print_script_traceback(exc: BaseException) -> None:
    """The traceback as ``python script.py`` would print it: without the audit's and runpy's frames."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in (__file__, "<frozen runpy>")
                              or tb.tb_frame.f_code.co_filename.endswith("runpy.py")):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def run_script(target: str, args: list[str], module: bool = False) -> int:
    """Run it with ``sys.argv`` set; return its exit status (0, its ``sys.exit`` code, or 1 after
    printing the traceback of an exception, as python would). FileNotFoundError if no such script."""
    if module:
        argv, path_entry = [target, *args], os.getcwd()
        launch = lambda: runpy.run_module(target, run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        if not os.path.isfile(target):
            raise FileNotFoundError(f"no such script: {target}")
        argv, path_entry = [target, *args], os.path.dirname(os.path.abspath(target))
        launch = lambda: runpy.run_path(target, run_name="__main__")  # noqa: E731
    with _script_environment(argv, path_entry):
        try:
            launch()
        except SystemExit as exc:
            return _exit_code(exc)
        except KeyboardInterrupt as exc:
            _print_script_traceback(exc)
            return 130
        except BaseException as exc:  # the script's own failure: shown as Python would
            _print_script_traceback(exc)
            return 1
        finally:
            sys.stdout.flush()
    return 0
