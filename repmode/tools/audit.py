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
import warnings
from dataclasses import dataclass, field

from ..errors import UnsupportedOpWarning
from ..mode import UnsupportedRecord, enabled, format_report
from .script_runner import run_script


@dataclass
class AuditResult:
    target: str
    argv: list[str]
    exit_status: int = 0
    records: list[UnsupportedRecord] = field(default_factory=list)

    def as_json(self) -> str:
        from ..version import NUMERICS_VERSION, __version__

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


def run(target: str, args: list[str], module: bool = False, stdout=None) -> AuditResult:
    """Run the script (or, with ``module=True``, ``python -m target``) under an auditing block.

    ``stdout``: where the script's standard output goes (default: unchanged)."""
    result = AuditResult(target, [target, *args])
    session = enabled(strict=False, audit=True)
    redirect = contextlib.redirect_stdout(stdout) if stdout is not None else contextlib.nullcontext()
    with redirect, warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedOpWarning)  # the report lists them once, at the end
        with session:
            result.exit_status = run_script(target, args, module)
    result.records = session.report()
    return result
