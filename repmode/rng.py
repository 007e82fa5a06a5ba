"""repmode's random stream: where each random op reads its Philox4x32-10 blocks.

A stream is a ``(seed, offset)`` pair. An op that needs ``k`` blocks reads blocks
``offset, ..., offset + k - 1`` of the stream keyed by ``seed`` and advances ``offset`` by ``k``
(csrc/common/philox.h, csrc/common/random.h; docs/semantics.md, "Random numbers"). The
values therefore depend only on the seed, the sequence of random calls and their shapes and
arguments: not on the device, the thread count or the memory layout.

Seeding. The default stream follows ``torch.manual_seed``: importing repmode wraps
``torch.manual_seed`` so that every call also reseeds this stream (offset 0), which makes an
unchanged script that seeds torch reproducible under repmode. ``repmode.manual_seed`` seeds only
repmode's stream. A CPU ``torch.Generator`` passed to a random op (as DataLoader's sampler passes
one to ``randperm``) gives that op a stream of its own: the op draws one 63-bit key from the
generator with the generator's own algorithm (mt19937, the same on every machine) and reads
blocks 0, 1, ... of the stream keyed by it. So the generator's seed and the sequence of ops that
use it decide the values, exactly as in torch.

State. ``get_rng_state()`` returns a plain dict (safe to put in a checkpoint) and
``set_rng_state(state)`` restores it; the stream then continues identically.
"""
from __future__ import annotations

import functools
import threading

import torch

_MASK64 = (1 << 64) - 1


class Stream:
    """A seed and the number of blocks already read."""

    __slots__ = ("seed", "offset")

    def __init__(self, seed: int, offset: int = 0):
        self.seed = int(seed) & _MASK64
        self.offset = int(offset)

    def take(self, blocks: int) -> tuple[int, int]:
        """Reserve ``blocks`` blocks: returns ``(seed, first block)`` and advances the offset."""
        start = self.offset
        self.offset = start + int(blocks)
        if self.offset >= 1 << 64:
            raise OverflowError("repmode's random stream is exhausted (2^64 blocks); reseed it")
        return self.seed, start


_lock = threading.Lock()
_default = Stream(torch.initial_seed())


def manual_seed(seed: int) -> None:
    """Seed repmode's default stream (offset 0). ``torch.manual_seed`` calls this too."""
    with _lock:
        _default.seed = int(seed) & _MASK64
        _default.offset = 0


def get_rng_state() -> dict:
    """The default stream's state, as a dict of ints (picklable; put it in checkpoints)."""
    with _lock:
        return {"seed": _default.seed, "offset": _default.offset}


def set_rng_state(state: dict) -> None:
    """Restore a state from :func:`get_rng_state`."""
    with _lock:
        _default.seed = int(state["seed"]) & _MASK64
        _default.offset = int(state["offset"])


def take(blocks: int, generator: torch.Generator | None = None) -> tuple[int, int]:
    """``(seed, first block)`` for an op reading ``blocks`` blocks, from the default stream or
    from a stream keyed by one draw of ``generator``."""
    if generator is None:
        with _lock:
            return _default.take(blocks)
    if generator.device.type != "cpu":
        raise NotImplementedError("repmode: only CPU torch.Generator objects can key a random stream in this build")
    key = int(torch.empty((), dtype=torch.int64).random_(generator=generator))
    return key, 0


def _install_torch_seed_hook() -> None:
    """Make ``torch.manual_seed`` (and ``torch.random.manual_seed``) also seed repmode's stream."""
    original = torch.random.manual_seed
    if getattr(original, "_repmode_hook", False):
        return

    @functools.wraps(original)
    def manual_seed_and_repmode(seed):
        result = original(seed)
        manual_seed(int(seed))
        return result

    manual_seed_and_repmode._repmode_hook = True
    torch.random.manual_seed = manual_seed_and_repmode
    torch.manual_seed = manual_seed_and_repmode


_install_torch_seed_hook()
