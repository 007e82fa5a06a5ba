"""Exceptions and warnings repmode raises."""


class UnsupportedOpError(RuntimeError):
    """An aten op reached repmode that has no reproducible implementation.

    Raised in strict mode (the default) instead of silently running a kernel whose
    bits depend on the hardware, the thread count or the library version.
    """


class UnsupportedOpWarning(UserWarning):
    """Emitted once per overload when ``strict=False`` runs a native, non-reproducible op."""


class ReproducibilityEnvironmentError(RuntimeError):
    """The process is configured in a way that makes reproducible results impossible."""


class CompiledRegionWarning(UserWarning):
    """torch.compile'd code ran inside ``repmode.enabled()``: it runs eagerly, op by op, through repmode."""
