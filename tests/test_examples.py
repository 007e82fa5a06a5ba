"""The examples train under strict mode and print the same digests at 1 and 2 threads."""
from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str) -> dict[str, str]:
    result = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args],
                            capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    lines = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(":")
        lines[key.strip()] = value.strip()
    return lines


def test_train_mlp_is_reproducible_across_thread_counts():
    one = run_example("train_mlp.py", "--threads", "1")
    two = run_example("train_mlp.py", "--threads", "2")
    for key in ("initial parameters", "trained parameters", "test logits"):
        assert len(one[key]) == 64, one
        assert one[key] == two[key], key
    assert float(one["test accuracy"]) > 0.90
    assert one["test accuracy"] == two["test accuracy"]
