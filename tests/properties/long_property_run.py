"""Long local run of the property suite (issue 8): many hypothesis examples per op family.

Each family (one hypothesis test in tests/properties/test_properties*.py) runs in chunks: a fresh pytest process per
chunk with its own `--hypothesis-seed`, so chunks draw different cases and a run can stop and
resume (finished chunks are read back from the log and skipped). Every chunk appends one JSON line
with the counts hypothesis reports for its generate phase.

    python tests/properties/long_property_run.py --chunk 5000 --target 100000 --log long.jsonl
    python tests/properties/long_property_run.py --summary --log long.jsonl

Several workers can share one log (``--worker k --workers n``, say one per core, each with the
families in its own order): the log is read again before every chunk, a family is done once
its chunks together reach ``--target`` examples, and worker k uses seeds k, k+n, k+2n, ...

A failed chunk (failing examples or a crash) stays in the log as the evidence to act on. Once the
cause is fixed, ``--rerun-failed`` runs each failed chunk again, same family and seed, at the
current commit; its new row supersedes the old one.

Not collected by pytest (its name does not start with test_).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent  # tests/properties
ROOT = HERE.parents[1]
STATS = re.compile(r"(\d+) passing, (\d+) failing, and (\d+) invalid")


def suites() -> dict[str, str]:
    """{family (a hypothesis test's name): its file} over tests/properties/test_properties*.py."""
    found = {}
    for path in sorted(HERE.glob("test_properties*.py")):
        for name in re.findall(r"^def (test_\w+)\(data\)", path.read_text(), flags=re.M):
            assert name not in found, f"{name} is defined in two property suites"
            found[name] = path.relative_to(ROOT).as_posix()
    return found


def families() -> list[str]:
    return list(suites())


def finished(log: Path) -> dict[tuple[str, int], dict]:
    if not log.exists():
        return {}
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return {(r["family"], r["seed"]): r for r in rows}


def current_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip()


def failed_chunks(log: Path, commit: str) -> list[dict]:
    """The rows whose chunk failed or crashed at another commit (a rerun at the same commit repeats it)."""
    return [r for r in finished(log).values()
            if (r["failing"] or r["exit"] != 0) and r["commit"] != commit]


def run_chunk(family: str, seed: int, examples: int) -> dict:
    env = dict(os.environ, REPMODE_HYPOTHESIS_PROFILE="long", REPMODE_HYPOTHESIS_EXAMPLES=str(examples))
    # workers side by side oversubscribe the cores (every example also runs at 2 and 3 threads), and
    # OpenMP threads spinning at barriers then cost 2-4x (optimizer chunks: 160 s against 44 s)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cmd = [sys.executable, "-m", "pytest", "-q", f"{suites()[family]}::{family}", f"--hypothesis-seed={seed}",
           "--hypothesis-show-statistics", "-p", "no:cacheprovider"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    counts = [tuple(map(int, m)) for m in STATS.findall(proc.stdout)]
    passing, failing, invalid = (sum(c[i] for c in counts) for i in range(3))
    row = dict(family=family, seed=seed, requested=examples, passing=passing, failing=failing,
               invalid=invalid, exit=proc.returncode, seconds=round(seconds, 1), commit=current_commit())
    if proc.returncode != 0:  # keep the failure's report: it is the evidence to act on
        row["output_tail"] = proc.stdout[-6000:] + proc.stderr[-2000:]
    return row


def summary(log: Path) -> str:
    by_family: dict[str, list[dict]] = {}
    for row in finished(log).values():
        by_family.setdefault(row["family"], []).append(row)
    lines = ["| family (test) | chunks | examples run | invalid (not run) | failing | crashes (exit != 0) | wall time "
             "| examples per commit |",
             "|---|---|---|---|---|---|---|---|"]
    for family in families():
        rows = by_family.get(family, [])
        if not rows:
            continue
        per_commit: dict[str, int] = {}
        for r in rows:
            per_commit[r["commit"]] = per_commit.get(r["commit"], 0) + r["passing"]
        lines.append(f"| `{family}` | {len(rows)} | {sum(r['passing'] for r in rows):,} | "
                     f"{sum(r['invalid'] for r in rows):,} | {sum(r['failing'] for r in rows)} | "
                     f"{sum(r['exit'] != 0 for r in rows)} | {sum(r['seconds'] for r in rows) / 60:.0f} min | "
                     + ", ".join(f"{c} {n:,}" for c, n in per_commit.items()) + " |")
    return "\n".join(lines)


def append(log: Path, row: dict) -> None:
    with log.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(f"{row['family']} seed {row['seed']}: {row['passing']} passing, {row['failing']} failing, "
          f"exit {row['exit']}, {row['seconds']} s", flush=True)


def rerun_failed(log: Path, only: list[str] | None = None) -> int:
    """Exit 0 when every rerun passed. Each rerun is logged as it ends, so an interrupted run keeps its rows.

    ``only``: rerun just these families' failed chunks (those whose cause is fixed)."""
    still_failing = False
    for old in failed_chunks(log, current_commit()):
        if only and old["family"] not in only:
            continue
        row = run_chunk(old["family"], old["seed"], old["requested"])
        append(log, row)
        still_failing |= bool(row["failing"] or row["exit"] != 0)
    return int(still_failing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, required=True, help="JSON-lines file, appended to and resumed from")
    parser.add_argument("--chunk", type=int, default=10_000, help="examples per chunk (one pytest process)")
    parser.add_argument("--target", type=int, default=100_000, help="examples per family, all workers together")
    parser.add_argument("--family", action="append", help="only these tests, in this order (repeatable); default all")
    parser.add_argument("--reverse", action="store_true", help="take the families in reverse order")
    parser.add_argument("--worker", type=int, default=1, help="this worker's number, 1..workers")
    parser.add_argument("--workers", type=int, default=1, help="workers sharing the log")
    parser.add_argument("--summary", action="store_true", help="print the markdown table of the log and exit")
    parser.add_argument("--rerun-failed", action="store_true",
                        help="run the failed chunks of the log again at this commit (same seed, same size) and exit")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(args.log))
        return 0
    if args.rerun_failed:
        return rerun_failed(args.log, args.family)
    order = args.family or families()
    for family in reversed(order) if args.reverse else order:
        seed = args.worker
        while True:
            done = finished(args.log)
            if sum(r["passing"] for (f, _), r in done.items() if f == family) >= args.target:
                break
            while (family, seed) in done:
                seed += args.workers
            row = run_chunk(family, seed, args.chunk)
            append(args.log, row)
            if row["exit"] != 0 and row["passing"] == 0:
                break  # the chunk did not run (a collection error, say): do not spin on it
    return 0


if __name__ == "__main__":
    sys.exit(main())
