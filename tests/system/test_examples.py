"""The examples train under strict mode, reach a sensible accuracy, and print the same digests
when rerun in another process at another thread count."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# example: the least test accuracy it reaches with its default epochs (all of them run whole:
# about 10-40 s each on 2 cores).
EXAMPLES = {
    "train_mlp.py": 0.90,
    "train_cnn.py": 0.90,
    "train_transformer.py": 0.90,
    "train_lstm.py": 0.85,
}


def run_example(name: str, *args: str) -> dict[str, str]:
    result = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args],
                            capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    lines = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(":")
        lines[key.strip()] = value.strip()
    return lines


# The Transformer and LSTM examples train for minutes on 2 cores: the long tier (their digests are
# also compared CPU against CUDA by `repmode crosscheck` on each GPU run).
LONG_EXAMPLES = {"train_transformer.py", "train_lstm.py"}


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long) if n in LONG_EXAMPLES else n
                                  for n in sorted(EXAMPLES)])
def test_example_is_reproducible_across_thread_counts(name):
    one = run_example(name, "--threads", "1")
    two = run_example(name, "--threads", "2")
    for key in ("initial parameters", "trained parameters", "test logits"):
        assert len(one[key]) == 64, one
        assert one[key] == two[key], key
    assert float(one["test accuracy"]) > EXAMPLES[name]
    assert one["test accuracy"] == two["test accuracy"]


def _ops_example(threads: int) -> str:
    env = dict(__import__("os").environ, OMP_NUM_THREADS=str(threads))
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "reproducible_ops.py")], capture_output=True,
                            text=True, timeout=600, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


@pytest.mark.slow
def test_reproducible_ops_example():
    one, two = _ops_example(1), _ops_example(2)
    digests = [line.split() for line in one.splitlines() if line.startswith("  ") and len(line.split()) == 2]
    assert [name for name, _ in digests] == ["mm", "matmul", "div", "sqrt", "exp", "log", "sum", "mean", "softmax",
                                             "log_softmax", "cross_entropy", "conv2d"]
    assert all(len(d) == 64 for _, d in digests)
    assert one.split("CPU vs CUDA")[0] == two.split("CPU vs CUDA")[0]  # same digests at 1 and 2 threads
    sum_line = next(line for line in one.splitlines() if "sum of 16M floats" in line)
    assert sum_line.rstrip().endswith("(equal)")  # repmode's sum, 1 vs 2 threads in one process
    assert "repmode equal" in one  # the mm row is batch-invariant


@pytest.mark.slow
@pytest.mark.long  # two traced trainings and their diffs (docs/evidence.md, "The long tier")
def test_find_divergence_example(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "find_divergence.py"), "--keep", str(tmp_path)],
                            capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    native, rep = result.stdout.split("== repmode")
    assert "(repmode diff exit status 1)" in native and "first difference at #" in native
    assert "(repmode diff exit status 0)" in rep and "identical: all" in rep
    assert len(list(tmp_path.glob("*.trace.gz"))) == 4


@pytest.mark.slow
@pytest.mark.parametrize("name,epochs", [("train_cnn.py", "2"),
                                         pytest.param("train_transformer.py", "1", marks=pytest.mark.long)])
def test_examples_train_under_bf16_autocast_reproducibly(name, epochs):
    one = run_example(name, "--amp", "bf16", "--epochs", epochs, "--threads", "1")
    two = run_example(name, "--amp", "bf16", "--epochs", epochs, "--threads", "2")
    for key in ("initial parameters", "trained parameters", "test logits", "test accuracy"):
        assert one[key] == two[key], key
    float32 = run_example(name, "--epochs", epochs, "--threads", "2")
    assert one["test logits"] != float32["test logits"]  # autocast really changed the arithmetic
