"""The OpInfo coverage report: every float32 CPU OpInfo of torch's op_db, run natively and in
repmode's strict mode at 1 and 2 threads (tests/support/opinfo_harness.py), as Markdown.

    PYTHONPATH=. python tests/system/opinfo_report.py                  # every sample of every OpInfo: the full run
    python tests/system/opinfo_report.py --samples 3 --write report.md  # what CI runs (about a minute)
    python tests/system/opinfo_report.py --write-expected tests/system/opinfo_expected.txt
    python tests/system/opinfo_report.py --only sort --only topk       # OpInfos whose name contains a word

Comparisons are tests/support/opinfo_harness.py's; singular and eigenvectors (``svd``,
``linalg.svd``, ``linalg.eigh``) are compared up to one sign per singular triplet, applied to ``u``
and ``v`` together, with repmode's documented sign rule checked exactly (tests/support/opinfo_gauge.py
says how and why: LAPACK's signs follow no rule).

``--write-expected`` regenerates the checked-in list of OpInfos that do not pass: write it from the
full run (the default ``--samples all``): the list records the first sample that does not pass, and
the CI test (tests/system/test_opinfo.py, first 3 samples) expects a pass where that lies later.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
from support import opinfo_harness as h  # noqa: E402

FULL_SAMPLES = "all"
ALL = 1 << 30

EXPECTED_HEADER = """\
# OpInfos of torch's op_db (float32, CPU) that do not pass under repmode's strict mode, written by
# `python tests/system/opinfo_report.py --samples {samples} --write-expected tests/system/opinfo_expected.txt`
# (torch {torch}). Every OpInfo not listed here passes: it matches native torch (assert_close's
# float32 defaults, or no further than native from the op run in float64; exact for integers and
# bool) forward and backward, with the same bits at 1 and 2 threads. tests/system/test_opinfo.py
# fails on any difference from this list: a new entry (a regression), an entry that now passes
# ("remove it from the list") or one that stops elsewhere.
#
# <OpInfo name[:variant]>  <category>  sample=<first sample that does not pass>  <phase>  <detail>
# phase: forward, backward, forward@noncontiguous, backward@noncontiguous (the run on strided copies)
# or inplace (the OpInfo's in-place variant, x.op_(...));
# unsupported: detail = the aten overload repmode refused (must match);
# error / mismatch / variance: defects, listed so CI stays green while they are visible; detail = the
# first message (informative: the category and sample must match).
"""


def write_expected(results, path, samples):
    order = {c: i for i, c in enumerate(h.CATEGORIES)}
    lines = [EXPECTED_HEADER.format(samples=samples, torch=torch.__version__.split("+")[0])]
    for category in h.CATEGORIES[1:]:
        rows = sorted((r for r in results if r.category == category), key=lambda r: r.key)
        if not rows:
            continue
        lines.append(f"\n# --- {category} ({len(rows)}) ---\n")
        lines.extend(r.expected_line() + "\n" for r in sorted(rows, key=lambda r: (order[r.category], r.key)))
    with open(path, "w") as f:
        f.writelines(lines)


def markdown(results, samples, seconds) -> str:
    n = len(results)
    counts = h.totals(results)
    out = [f"# OpInfo coverage under repmode strict mode ({datetime.date.today().isoformat()})\n",
           f"torch {torch.__version__}, float32 on the CPU, "
           f"{'every sample' if samples == 'all' else f'the first {samples} sample(s)'} of each OpInfo, "
           "native vs repmode at 1 and 2 threads and on non-contiguous inputs, forward and backward; "
           f"{seconds:.0f} s.\n",
           "| status | OpInfos | share |", "|---|---:|---:|"]
    for c in counts:
        out.append(f"| {c} | {counts[c]} | {100 * counts[c] / max(n, 1):.1f}% |")
    out.append(f"| **total** | **{n}** | |\n")
    random = sum(r.random for r in results)
    run = sum(r.samples_run for r in results)
    backward = sum(r.backward_run for r in results)
    out.append(f"{run} samples ran natively, {backward} of them with a backward compared.\n")
    closer = [r for r in results if r.closer_than_native]
    out.append(f"{sum(r.closer_than_native for r in closer)} results (forward, backward or in-place) of "
               f"{len(closer)} OpInfos differ from native beyond assert_close's tolerances but are no further "
               "from the float64 result than native's (they pass: tests/support/opinfo_harness.py)"
               + (": " + ", ".join(f"`{r.key}` ({r.closer_than_native})" for r in closer) if closer else "")
               + ".\n")
    average = [r for r in results if r.closer_on_average]
    out.append(f"{sum(r.closer_on_average for r in average)} results of {len(average)} OpInfos are further from "
               "the float64 result than native's on the sample but no further on average over redraws of it "
               "(they pass: tests/support/opinfo_harness.py, \"Closer on average\")"
               + (": " + ", ".join(f"`{r.key}` ({r.closer_on_average})" for r in average) if average else "")
               + ".\n")
    skipped = sum(r.native_failed for r in results)
    none = sum(1 for r in results if r.samples_run == 0)
    out.append(f"{random} OpInfos draw random numbers (compared with native for shapes and dtypes only); "
               f"{skipped} samples were left out because native torch raised on them; {none} OpInfos had no "
               "sample native torch runs (not run: nothing was compared).\n")
    stoppers = collections.Counter(r.aten_op for r in results if r.category == "unsupported")
    out += ["## Aten ops that stop the most OpInfos\n", "| aten op | OpInfos stopped |", "|---|---:|"]
    out += [f"| `{op}` | {k} |" for op, k in stoppers.most_common(40)]
    for c in h.CATEGORIES[2:]:
        rows = sorted((r for r in results if r.category == c), key=lambda r: r.key)
        out += [f"\n## {c} ({len(rows)})\n"]
        out += [f"- `{r.key}` (sample {r.sample}, {r.phase}): {r.message.replace('|', '/')}" for r in rows]
    out += ["\n## Every OpInfo\n", "| OpInfo | status | sample | phase | detail | s |", "|---|---|---:|---|---|---:|"]
    for r in results:
        detail = (f"`{r.aten_op}`" if r.category == "unsupported" else r.message).replace("|", "/")
        sample = "" if r.sample is None else r.sample
        status = "not run" if r.category == "pass" and not r.samples_run else r.category
        out.append(f"| `{r.key}` | {status} | {sample} | {r.phase} | {detail} | {r.seconds:.2f} |")
    slow = sorted(results, key=lambda r: -r.seconds)[:10]
    out += ["\n## Slowest OpInfos\n"] + [f"- `{r.key}`: {r.seconds:.1f} s" for r in slow]
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", default=FULL_SAMPLES, help="samples per OpInfo, or 'all' (default %(default)s)")
    p.add_argument("--only", action="append", default=[], help="only OpInfos whose key contains this (repeatable)")
    p.add_argument("--write", metavar="PATH", help="write the Markdown report here (default: stdout)")
    p.add_argument("--write-expected", metavar="PATH", help="write the list of OpInfos that do not pass")
    p.add_argument("--progress", action="store_true", help="print each OpInfo's status to stderr as it runs")
    args = p.parse_args(argv)
    n_samples = ALL if args.samples == "all" else int(args.samples)
    ops = [op for op in h.float32_cpu_ops() if not args.only or any(w in h.key(op) for w in args.only)]
    start = time.perf_counter()
    results = []
    for op in ops:
        if args.progress:
            print(f"{h.key(op)} ...", end=" ", file=sys.stderr, flush=True)
        r = h.run_opinfo(op, n_samples)
        results.append(r)
        if args.progress:
            print(f"{r.category} {r.seconds:.2f}s {r.aten_op or r.message[:120]}", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    text = markdown(results, args.samples, seconds)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.write_expected:
        write_expected(results, args.write_expected, args.samples)
    counts = h.totals(results)
    print(f"OpInfos: {len(results)}; " + ", ".join(f"{c} {counts[c]}" for c in counts)
          + f"; {seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
