"""repmode's version and the version of its numerics (a leaf: imports nothing).

NUMERICS_VERSION is bumped whenever any kernel's canonical order or formula changes: results
are identical across repmode versions with the same NUMERICS_VERSION (docs/semantics.md).
"""

NUMERICS_VERSION = 7

__version__ = "0.7.0"
