"""repmode: bitwise-reproducible PyTorch.

    with repmode.enabled():
        train(model)          # every aten op runs in one canonical order

See README.md and docs/semantics.md.
"""
from .errors import CompiledRegionWarning, ReproducibilityEnvironmentError, UnsupportedOpError, UnsupportedOpWarning
from .mode import ReproducibleMode, Session, enabled
from .registry import registrations, supported_ops
from .digest import digest
from ._ext import cpu_isa, set_cpu_isa
from .rng import get_rng_state, manual_seed, set_rng_state
from .wrap import from_torch_module, is_wrapped, run_reproducibly, unwrap, wrap
from . import ops
from .trace import trace
from .divergence import diff_traces, replay

# Bumped whenever any kernel's canonical order or formula changes: results are identical across
# repmode versions with the same NUMERICS_VERSION.
NUMERICS_VERSION = 1

__version__ = "0.1.0"

__all__ = [
    "enabled", "Session", "ReproducibleMode", "UnsupportedOpError", "UnsupportedOpWarning",
    "ReproducibilityEnvironmentError", "CompiledRegionWarning", "supported_ops", "registrations", "cpu_isa", "set_cpu_isa",
    "NUMERICS_VERSION", "digest", "manual_seed", "get_rng_state", "set_rng_state",
    "from_torch_module", "wrap", "unwrap", "is_wrapped", "run_reproducibly", "ops", "trace", "diff_traces",
    "replay",
]
