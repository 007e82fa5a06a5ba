"""`repmode crosscheck` (CPU vs CUDA digests): its op battery and its behaviour without a GPU."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

from repmode.tools import crosscheck


@pytest.mark.parametrize("name", list(crosscheck.BATTERY))
def test_every_battery_entry_runs_under_the_mode_and_is_thread_invariant(name):
    fn = crosscheck.BATTERY[name]
    assert crosscheck._run_op(fn, "cpu", 1) == crosscheck._run_op(fn, "cpu", 2)


@pytest.mark.skipif(crosscheck.gpu_unavailable_reason() is None, reason="a GPU is present: the real table runs")
def test_without_a_gpu_it_says_why_and_exits_2():
    out = io.StringIO()
    assert crosscheck.crosscheck(out=out) == 2
    assert "nothing to compare" in out.getvalue() and crosscheck.gpu_unavailable_reason() in out.getvalue()


@pytest.mark.slow
def test_an_example_with_device_cpu_prints_the_same_digests_as_without():
    folder = crosscheck.examples_dir()
    assert folder is not None and all((folder / script).is_file() for script in crosscheck.EXAMPLES)
    plain = subprocess.run([sys.executable, str(folder / "train_mlp.py"), "--epochs", "1"], capture_output=True,
                           text=True, check=True).stdout
    digests = crosscheck._run_example(folder / "train_mlp.py", "cpu", 1)  # adds --device cpu --threads 2
    assert set(digests) == {"initial parameters", "trained parameters", "test logits"}
    for what, value in digests.items():
        assert f"{what}:" in plain and value in plain
