"""``repmode audit``: run a script with every op under repmode (``strict=False``) and list the
unsupported ones it reached.

The whole script runs inside one non-strict block: ops it issues outside its own
``repmode.enabled()`` blocks are audited too (so the report answers "what is missing to wrap
all of it"), and blocks the script opens itself neither raise nor keep their own report.
The script's output, exceptions and exit status are its own; the report comes after it.
Ops issued on threads the script starts, or in subprocesses (DataLoader workers), are not seen.
"""
from __future__ import annotations

import contextlib
import json
import os
import runpy
import sys
import traceback
import warnings
from dataclasses import dataclass, field

from .errors import UnsupportedOpWarning
from .mode import Session, UnsupportedRecord, format_report


@dataclass
class AuditResult:
    target: str
    argv: list[str]
    exit_status: int = 0
    records: list[UnsupportedRecord] = field(default_factory=list)

    def as_json(self) -> str:
        from . import NUMERICS_VERSION, __version__

        return json.dumps({
            "target": self.target,
            "argv": self.argv,
            "script_exit_status": self.exit_status,
            "repmode_version": __version__,
            "numerics_version": NUMERICS_VERSION,
            "unsupported": [r.as_dict() for r in self.records],
        }, indent=2)

    def as_text(self) -> str:
        text = format_report(self.records)
        if self.exit_status:
            text += f"\nrepmode: the script exited with status {self.exit_status}."
        return text

    def status(self) -> int:
        """The script's own failure status if it failed, else 1 when an op was unsupported, else 0."""
        if self.exit_status:
            return self.exit_status
        return 1 if self.records else 0


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


def run(target: str, args: list[str], module: bool = False, stdout=None) -> AuditResult:
    """Run the script (or, with ``module=True``, ``python -m target``) under an auditing block.

    ``stdout``: where the script's standard output goes (default: unchanged)."""
    if module:
        argv, path_entry = [target, *args], os.getcwd()
        launch = lambda: runpy.run_module(target, run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        if not os.path.isfile(target):
            raise FileNotFoundError(f"repmode audit: no such script: {target}")
        argv, path_entry = [target, *args], os.path.dirname(os.path.abspath(target))
        launch = lambda: runpy.run_path(target, run_name="__main__")  # noqa: E731
    result = AuditResult(target, argv)
    session = Session(strict=False)
    session.mode.auditing = True
    redirect = contextlib.redirect_stdout(stdout) if stdout is not None else contextlib.nullcontext()
    with _script_environment(argv, path_entry), redirect, warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedOpWarning)  # the report lists them once, at the end
        try:
            with session:
                launch()
        except SystemExit as exc:
            result.exit_status = _exit_code(exc)
        except KeyboardInterrupt as exc:
            _print_script_traceback(exc)
            result.exit_status = 130
        except BaseException as exc:  # the script's own failure: shown as Python would, then reported
            _print_script_traceback(exc)
            result.exit_status = 1
        finally:
            sys.stdout.flush()
    result.records = session.report()
    return result
