"""The ``repmode`` command (also ``python -m repmode``).

    repmode audit [--json] [-o FILE] script.py [args...]   # which ops does a script need?
    repmode audit [--json] -m package.module [args...]
    repmode ops [--write [PATH] | --check [PATH]]           # docs/supported_ops.md from the registry
"""
from __future__ import annotations

import argparse
import sys


def _audit(ns) -> int:
    from . import audit

    if ns.module:
        target, args = ns.module, ns.args
    elif ns.args:
        target, args = ns.args[0], ns.args[1:]
    else:
        print("repmode audit: give a script (or -m module) to run", file=sys.stderr)
        return 2
    # With --json on stdout the script's own output goes to stderr, so stdout stays parseable.
    script_stdout = sys.stderr if ns.json and ns.output is None else None
    try:
        result = audit.run(target, args, module=bool(ns.module), stdout=script_stdout)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    report = result.as_json() if ns.json else result.as_text()
    if ns.output:
        with open(ns.output, "w") as f:
            f.write(report + "\n")
    else:
        print(report, flush=True)
    return result.status()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="repmode", description="Bitwise-reproducible PyTorch: tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    audit = commands.add_parser(
        "audit", help="run a script with strict=False and list the unsupported ops it reached",
        description="Run a Python script with every aten op under repmode (strict=False) and print each "
                    "unsupported overload: name, call count, dtypes, devices, first call site. Exit status: "
                    "the script's own if it failed, else 1 when any op was unsupported, else 0.")
    audit.add_argument("--json", action="store_true",
                       help="print the report as JSON (the script's stdout then goes to stderr)")
    audit.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    audit.add_argument("-m", dest="module", metavar="MODULE", help="run a module, like python -m")
    audit.add_argument("args", nargs=argparse.REMAINDER, help="the script and its arguments")
    audit.set_defaults(handler=_audit)
    ops = commands.add_parser("ops", add_help=False, help="write or check the table of supported ops "
                                                          "(docs/supported_ops.md)")
    ops.set_defaults(handler=None)  # main() hands its arguments to repmode.ops_table
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["ops"]:
        from . import ops_table

        return ops_table.main(argv[1:])
    ns = build_parser().parse_args(argv)
    return ns.handler(ns)


if __name__ == "__main__":
    sys.exit(main())
