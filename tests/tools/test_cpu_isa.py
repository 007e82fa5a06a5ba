"""Choosing the CPU SIMD path: every path this CPU has can be selected and reported, and asking for
one it lacks (or an unknown name), through repmode.set_cpu_isa or REPMODE_CPU_ISA at import, fails
with an error that names the path and the best one available."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import available_isas

import repmode
from repmode import _ext


def test_each_available_path_is_selected_and_reported():
    old = repmode.cpu_isa()
    try:
        for isa in available_isas():
            repmode.set_cpu_isa(isa)
            assert repmode.cpu_isa() == isa
        repmode.set_cpu_isa("auto")
        assert repmode.cpu_isa() == _ext.C.best_cpu_isa()
    finally:
        repmode.set_cpu_isa(old)


def test_unknown_path_is_refused_and_nothing_changes():
    old = repmode.cpu_isa()
    with pytest.raises(ValueError, match=r"'avx1024' is not available on this CPU \(best: "):
        repmode.set_cpu_isa("avx1024")
    assert repmode.cpu_isa() == old


def test_a_path_above_the_cpu_is_refused(monkeypatch):
    """On an AVX2-only CPU the binding refuses avx512 (set_active_isa: above best_isa()); the
    message then names the path and the best one. The binding is replaced by one that behaves
    like such a CPU's, since this test may run on an AVX-512 host."""
    class Avx2OnlyBinding:
        @staticmethod
        def set_cpu_isa(name):
            return name in ("auto", "scalar", "avx2")

        @staticmethod
        def best_cpu_isa():
            return "avx2"

    monkeypatch.setattr(_ext, "_C", Avx2OnlyBinding)
    with pytest.raises(ValueError, match=r"CPU ISA path 'avx512' is not available on this CPU \(best: avx2\)"):
        _ext.set_cpu_isa("avx512")
    _ext.set_cpu_isa("avx2")


def test_environment_variable_with_an_unavailable_path_fails_at_import():
    env = dict(os.environ, REPMODE_CPU_ISA="avx1024")
    proc = subprocess.run([sys.executable, "-c", "import repmode"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "REPMODE_CPU_ISA=avx1024" in proc.stderr and "not available on this CPU (best: " in proc.stderr
