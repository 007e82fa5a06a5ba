"""The ``repmode`` command (also ``python -m repmode``).

    repmode audit [--json] [-o FILE] script.py [args...]   # which ops does a script need?
    repmode audit [--json] -m package.module [args...]
    repmode ops [NAME ...] [--write [PATH] | --check [PATH]]  # the supported-ops table (or rows), from the registry
    repmode trace --out run.trace [--native] script.py [args...]   # per-op digests of a run
    repmode diff a.trace b.trace                            # the first op where two runs part ways
    repmode replay a.trace --op N                           # rerun one recorded op
    repmode crosscheck [--epochs N] [--no-examples]         # CPU vs CUDA digests (needs a GPU)
    repmode env [--json] [--no-self-check]                  # versions, CPU/ISA, threads, CUDA; canonical bits?
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys


def _audit(ns) -> int:
    from . import audit

    target, args = _target(ns)
    if target is None:
        print("repmode audit: give a script (or -m module) to run", file=sys.stderr)
        return 2
    # With --json on stdout the script's own output goes to stderr, so stdout stays parseable.
    script_stdout = sys.stderr if ns.json and ns.output is None else None
    try:
        result = audit.run(target, args, module=bool(ns.module), stdout=script_stdout)
    except FileNotFoundError as exc:
        print(f"repmode audit: {exc}", file=sys.stderr)
        return 2
    report = result.as_json() if ns.json else result.as_text()
    if ns.output:
        with open(ns.output, "w") as f:
            f.write(report + "\n")
    else:
        print(report, flush=True)
    return result.status()


def _target(ns):
    if ns.module:
        return ns.module, ns.args
    if ns.args:
        return ns.args[0], ns.args[1:]
    return None, None


def _trace(ns) -> int:
    from .script_runner import run_script
    from .trace import trace

    target, args = _target(ns)
    if target is None:
        print("repmode trace: give a script (or -m module) to run", file=sys.stderr)
        return 2
    if not ns.module and not os.path.isfile(target):
        print(f"repmode trace: no such script: {target}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        try:  # the output and the reference are checked before the script runs
            tracer = stack.enter_context(trace(ns.out, native=ns.native, strict=not ns.non_strict,
                                               reference=ns.reference, keep_values=ns.keep_values))
        except ValueError as exc:  # TraceFileError included (a ValueError)
            print(f"repmode trace: {exc}", file=sys.stderr)
            return 2
        status = run_script(target, args, module=bool(ns.module))
    print(f"repmode trace: {tracer.seq} ops recorded in {ns.out}"
          + (f"; values of {len(tracer.kept)} differing op(s) in {ns.out}.values.pt" if tracer.kept else ""),
          file=sys.stderr)
    return status


def _diff(ns) -> int:
    from .divergence import diff_traces
    from .trace import TraceFileError

    try:
        result = diff_traces(ns.a, ns.b)
    except TraceFileError as exc:
        print(f"repmode diff: {exc}", file=sys.stderr)
        return 2
    print(result.text)
    return 0 if result.kind == "identical" else 1


def _replay(ns) -> int:
    from .divergence import replay
    from .trace import TraceFileError

    try:
        print(replay(ns.trace, ns.op))
    except TraceFileError as exc:
        print(f"repmode replay: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"repmode replay: {exc.args[0]}", file=sys.stderr)
        return 2
    return 0


def _crosscheck(ns) -> int:
    from .crosscheck import crosscheck

    return crosscheck(epochs=ns.epochs, examples=not ns.no_examples)


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
    tr = commands.add_parser("trace", help="record per-op digests of a script's run (docs/trace.md)",
                             description="Run a script with every op recorded (op, call site, digest of each "
                                         "output) in a trace file; exit status is the script's.")
    tr.add_argument("--out", required=True, metavar="PATH", help="the trace file (.gz: compressed)")
    tr.add_argument("--native", action="store_true",
                    help="run torch's own kernels (repmode.enabled() blocks in the script stay inert)")
    tr.add_argument("--non-strict", action="store_true", help="under repmode, run unsupported ops natively")
    tr.add_argument("--reference", metavar="TRACE", help="an earlier trace to compare with while recording")
    tr.add_argument("--keep-values", type=int, default=0, metavar="N",
                    help="with --reference: keep the inputs and outputs of the first N ops that differ from it")
    tr.add_argument("-m", dest="module", metavar="MODULE", help="run a module, like python -m")
    tr.add_argument("args", nargs=argparse.REMAINDER, help="the script and its arguments")
    tr.set_defaults(handler=_trace)
    df = commands.add_parser("diff", help="name the first op where two traces differ (exit 1), or exit 0")
    df.add_argument("a")
    df.add_argument("b")
    df.set_defaults(handler=_diff)
    rp = commands.add_parser("replay", help="rerun one op from its kept inputs, natively and under repmode")
    rp.add_argument("trace")
    rp.add_argument("--op", type=int, required=True, metavar="N", help="the op's number (seq) in the trace")
    rp.set_defaults(handler=_replay)
    cc = commands.add_parser("crosscheck", help="ops and examples on the CPU and on a GPU: are the bits equal?",
                             description="Run a battery of ops and every training example on the CPU (2 threads) "
                                         "and on CUDA under repmode, print a table of digests; exit 0 when all "
                                         "are equal, 1 otherwise, 2 when there is no GPU to compare with.")
    cc.add_argument("--epochs", type=int, default=1, help="training epochs of each example (default 1)")
    cc.add_argument("--no-examples", action="store_true", help="only the op battery")
    cc.set_defaults(handler=_crosscheck)
    ops = commands.add_parser("ops", add_help=False, help="print the table of supported ops, or the named ops' rows; "
                                                          "--write/--check docs/supported_ops.md")
    ops.set_defaults(handler=None)  # main() hands its arguments to repmode.ops_table
    commands.add_parser("env", add_help=False, help="versions, CPU and ISA path, threads, CUDA, and a self-check: "
                                                    "does this machine compute repmode's canonical bits? (--json)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["ops"]:
        from . import ops_table

        return ops_table.main(argv[1:])
    if argv[:1] == ["env"]:
        from . import env

        return env.main(argv[1:])
    ns = build_parser().parse_args(argv)
    return ns.handler(ns)


if __name__ == "__main__":
    sys.exit(main())
