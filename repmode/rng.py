"""repmode's random stream: where each random op gets its Philox4x32-10 key.

repmode's random state *is* torch's CPU random state. Every random op draws one key ``K`` from a
torch CPU generator (``torch.default_generator``, or the ``generator=`` the op was given), with
torch's own algorithm (mt19937, the same on every machine), then reads blocks ``0, ..., k - 1`` of
the Philox stream keyed by ``K`` (csrc/common/philox.h, csrc/common/random.h; docs/semantics.md,
"Random numbers"). The values therefore depend only on the generator's state, the sequence of
random calls and their shapes and arguments: not on the device the result lives on (a CUDA
result is keyed from the CPU generator too), the thread count or the memory layout.

Because the key comes from torch's generator, everything torch does with that generator covers
repmode's stream with no hook and no user action: ``torch.manual_seed``, ``torch.get_rng_state`` /
``torch.set_rng_state``, ``torch.random.fork_rng``, ``torch.utils.checkpoint``'s
``preserve_rng_state`` (both variants: they save and restore the CPU state), and a checkpoint
that stores ``torch.get_rng_state()``. The cost is one native ``random_`` of a 0-d int64 tensor
per random op (about 1 microsecond); torch's generator takes its own lock for the draw, so
concurrent threads get disjoint keys, in an order that depends on the threads' interleaving (as
in torch).

``manual_seed``, ``get_rng_state`` and ``set_rng_state`` below are thin views of torch's CPU
generator, kept for existing code. States saved by repmode before numerics version 2 (a dict
``{"seed", "offset"}`` of the old stream) are refused with an error: that stream no longer exists,
and no state of the new one continues it.
"""
from __future__ import annotations

import threading

import torch

# the format tag of get_rng_state()'s dict
_STATE_KEY = "torch_cpu_rng_state"

_scratch = threading.local()


def manual_seed(seed: int) -> None:
    """Seed repmode's random stream: the same as ``torch.manual_seed(seed)`` (which it calls)."""
    torch.manual_seed(int(seed))


def get_rng_state() -> dict:
    """repmode's random state: ``{"torch_cpu_rng_state": bytes}``, the bytes of
    ``torch.get_rng_state()`` (picklable and comparable with ``==``; put it in checkpoints). Saving
    ``torch.get_rng_state()`` yourself is equivalent."""
    return {_STATE_KEY: torch.get_rng_state().numpy().tobytes()}


def set_rng_state(state) -> None:
    """Restore a state from :func:`get_rng_state` (or a ``torch.get_rng_state()`` tensor): the
    same as ``torch.set_rng_state``."""
    if isinstance(state, torch.Tensor):
        torch.set_rng_state(state)
        return
    if isinstance(state, dict) and _STATE_KEY in state:
        raw = state[_STATE_KEY]
        tensor = raw if isinstance(raw, torch.Tensor) else torch.frombuffer(bytearray(raw), dtype=torch.uint8)
        torch.set_rng_state(tensor)
        return
    if isinstance(state, dict) and {"seed", "offset"} <= set(state):
        raise ValueError(
            "repmode.set_rng_state: this {'seed', 'offset'} state was saved by repmode before numerics version 2; "
            "since version 2 repmode's random stream is keyed by torch's CPU generator and that old stream no "
            "longer exists, so no state continues it. Results of the resumed run cannot equal the old run's "
            "anyway (docs/semantics.md, 'Numerics versions'); reseed with torch.manual_seed(...) and save "
            "repmode.get_rng_state() (or torch.get_rng_state()) in new checkpoints.")
    raise TypeError(f"repmode.set_rng_state expects a dict from repmode.get_rng_state() or a torch.get_rng_state() "
                    f"tensor, not {type(state).__name__}")


def _key(generator: torch.Generator | None) -> int:
    """One 63-bit key from ``generator`` (default: torch's default CPU generator), drawn natively
    as ``torch.empty((), dtype=torch.int64).random_(generator=generator)`` would draw it."""
    t = getattr(_scratch, "t", None)
    if t is None:
        with torch.inference_mode(False):  # a normal tensor: usable inside and outside inference mode
            t = _scratch.t = torch.empty((), dtype=torch.int64)
    return t.random_(generator=generator).item()


def take(blocks: int, generator: torch.Generator | None = None) -> tuple[int, int]:
    """``(key, first block)`` for an op reading ``blocks`` blocks: the key is one draw of
    ``generator`` (default: torch's default CPU generator), the first block is 0."""
    if blocks >= 1 << 64:
        raise OverflowError("repmode: one random op can read at most 2^64 Philox blocks")
    if generator is not None and generator.device.type != "cpu":
        if generator.device.type != "cuda":
            raise NotImplementedError("repmode: only CPU and CUDA torch.Generator objects can key a random stream")
        # A CUDA generator keys the op from itself, as a CPU one does: one native draw (torch's
        # Philox on the GPU; a function of the generator's seed and offset). This is how the seed of
        # cuDNN's RNN dropout state (drawn from the default CUDA generator when nn.LSTM with dropout
        # first trains on a GPU) is drawn without touching torch's CPU generator, repmode's stream.
        return torch.empty((), dtype=torch.int64, device=generator.device).random_(generator=generator).item(), 0
    return _key(generator), 0
