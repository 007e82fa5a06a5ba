"""Test support code (not test modules): the shared helpers, hypothesis strategies and checkers,
float64/exact references, the distributed checks script and the CUDA test helpers.

tests/ is on sys.path (pyproject.toml: `pythonpath = ["tests"]`), so test modules import
``from support import assert_bitwise_equal, ...`` and ``from support.strategies import ...``.
Only the helpers below are imported with the package; the other modules are imported by name
(some need optional packages: hypothesis, mpmath)."""
from .helpers import (  # noqa: F401
    THREAD_COUNTS,
    OpRecorder,
    assert_bitwise_equal,
    assert_invariant,
    available_isas,
    bits,
    cpu_isa,
    float32_neighbours,
    layouts,
    num_threads,
    ulp_distance_f32,
    under_repmode,
)
