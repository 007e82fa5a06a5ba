"""pytest fixtures and hooks shared by every test under tests/. The helper functions live in the
support package (tests/support; `from support import assert_bitwise_equal, ...`)."""
from __future__ import annotations

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
