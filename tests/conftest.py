"""pytest fixtures and hooks shared by every test under tests/. The helper functions live in the
support package (tests/support; `from support import assert_bitwise_equal, ...`)."""
from __future__ import annotations

import os

import pytest
import torch


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)


# Hypothesis profiles for the property tests (tests/properties/test_properties.py): `ci` is bounded and
# derandomized so the default run is stable; `long` is the 100,000 examples per family.
# Pick one with REPMODE_HYPOTHESIS_PROFILE (default `ci`); REPMODE_HYPOTHESIS_EXAMPLES overrides
# the number of examples of the chosen profile (for a medium local run).
try:
    import os as _os

    from hypothesis import HealthCheck as _HealthCheck
    from hypothesis import settings as _hsettings

    _common = dict(deadline=None, suppress_health_check=[_HealthCheck.too_slow, _HealthCheck.data_too_large])
    _hsettings.register_profile("ci", max_examples=60, derandomize=True, database=None, **_common)
    _hsettings.register_profile("long", max_examples=100_000, **_common)
    _profile = _os.environ.get("REPMODE_HYPOTHESIS_PROFILE", "ci")
    if _os.environ.get("REPMODE_HYPOTHESIS_EXAMPLES"):
        _hsettings.register_profile("custom", _hsettings.get_profile(_profile),
                                    max_examples=int(_os.environ["REPMODE_HYPOTHESIS_EXAMPLES"]))
        _profile = "custom"
    _hsettings.load_profile(_profile)
except ImportError:  # hypothesis is only needed by the property tests
    pass


# The long tier: whole-example trainings and other checks that take minutes each on the 2-core CI
# machine. They run with `pytest --long` (or REPMODE_LONG=1), outside CI, and their results are
# recorded in docs/evidence.md ("The long tier"); without it they are reported as skipped with
# that reason, so a run always shows what it left out.
def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False,
                     help="also run the tests marked `long` (minutes each; outside CI, see docs/evidence.md)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long") or os.environ.get("REPMODE_LONG") == "1":
        return
    skip = pytest.mark.skip(reason="long tier: run with `pytest --long` (outside CI; docs/evidence.md)")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


# Tests set mpmath's global working precision for their references; restore it after each test so
# that no test's reference depends on which tests ran before it (seen: a logaddexp2 reference at
# FLT_MIN, computed at the 120 bits an FFT test had left behind).
@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    try:
        import mpmath
    except ImportError:
        yield
        return
    prec = mpmath.mp.prec
    try:
        yield
    finally:
        mpmath.mp.prec = prec
