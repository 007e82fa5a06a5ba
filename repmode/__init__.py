"""repmode: bitwise-reproducible PyTorch.

    with repmode.enabled():
        train(model)          # every aten op runs in one canonical order

See README.md and docs/semantics.md. The layers, top-down: ``mode`` (the dispatch mode) looks
overloads up in ``registry`` (a leaf), which ``kernels`` fills; ``tools`` (command line, audit,
trace, pytest plugin) builds on these.
"""
from . import ops
from ._ext import cpu_isa, set_cpu_isa
from .digest import digest
from .errors import (
    CompiledRegionWarning,
    ForkedProcessWarning,
    ReproducibilityEnvironmentError,
    UnsupportedOpError,
    UnsupportedOpWarning,
)
from .kernels import registrations, supported_ops
from .mode import ReproducibleMode, Session, enabled
from .rng import get_rng_state, manual_seed, set_rng_state
from .tools.divergence import diff_traces, replay
from .tools.trace import trace
from .version import NUMERICS_VERSION, __version__
from .world_invariant import TreeGradients
from .wrap import from_torch_module, is_wrapped, run_reproducibly, unwrap, wrap

__all__ = [
    "enabled", "Session", "ReproducibleMode", "UnsupportedOpError", "UnsupportedOpWarning",
    "ReproducibilityEnvironmentError", "CompiledRegionWarning", "ForkedProcessWarning", "supported_ops",
    "registrations", "cpu_isa", "set_cpu_isa", "NUMERICS_VERSION", "__version__", "digest", "manual_seed",
    "get_rng_state", "set_rng_state", "from_torch_module", "wrap", "unwrap", "is_wrapped", "run_reproducibly", "ops",
    "trace", "diff_traces", "replay", "TreeGradients",
]
