"""The examples train under strict mode, reach a sensible accuracy, and print the same digests
when rerun in another process at another thread count."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# example: (epochs in this test, least accuracy those epochs reach). The examples' own default
# epoch counts are longer (see each file); the test runs fewer to keep CI short.
EXAMPLES = {
    "train_mlp.py": (20, 0.90),
    "train_cnn.py": (8, 0.90),
    "train_transformer.py": (10, 0.90),
    "train_lstm.py": (10, 0.85),
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


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_is_reproducible_across_thread_counts(name):
    epochs, least_accuracy = EXAMPLES[name]
    one = run_example(name, "--threads", "1", "--epochs", str(epochs))
    two = run_example(name, "--threads", "2", "--epochs", str(epochs))
    for key in ("initial parameters", "trained parameters", "test logits"):
        assert len(one[key]) == 64, one
        assert one[key] == two[key], key
    assert float(one["test accuracy"]) > least_accuracy
    assert one["test accuracy"] == two["test accuracy"]
