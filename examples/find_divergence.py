"""Find the first op where two runs part ways: the CNN example traced natively at 1 and 2 threads,
then under repmode at 1 and 2 threads (docs/trace.md).

    python examples/find_divergence.py [--epochs 1] [--keep DIR]

Each run is `python -m repmode trace ... examples/train_cnn.py`; `repmode diff` then names the
first op whose output differs (natively: a reduction whose split depends on the thread count)
or reports identical runs (repmode).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def repmode_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "repmode", *args], capture_output=True, text=True)


def trace_cnn(out: str, threads: int, native: bool, epochs: int) -> None:
    flags = ["--native"] if native else []
    run = repmode_cli("trace", *flags, "--out", out, os.path.join(HERE, "train_cnn.py"), "--epochs", str(epochs),
                      "--threads", str(threads))
    if run.returncode != 0:
        sys.exit(f"tracing failed:\n{run.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR", help="write the traces to DIR (default: a temporary folder)")
    args = parser.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="repmode-traces-")
    os.makedirs(folder, exist_ok=True)
    for label, native in (("native torch", True), ("repmode", False)):
        name = "native" if native else "repmode"
        paths = [os.path.join(folder, f"cnn-{name}-{t}threads.trace.gz") for t in (1, 2)]
        for path, threads in zip(paths, (1, 2)):
            trace_cnn(path, threads, native, args.epochs)
        result = repmode_cli("diff", *paths)
        print(f"== {label}: 1 thread vs 2 threads (repmode diff exit status {result.returncode})")
        print(result.stdout.rstrip())
        print()
    print(f"traces in {folder}")


if __name__ == "__main__":
    main()
