"""``repmode.digest(obj)``: a SHA-256 of values, independent of device and memory layout.

The bytes hashed for a tensor are: a header with its dtype and shape, then its elements in
row-major order as a contiguous little-endian CPU copy, with every NaN replaced by one
canonical pattern (so payloads that differ between CPUs and GPUs hash the same).
Modules hash their ``state_dict`` (parameters and buffers, with names, in order); optimizers
hash their ``state_dict``; lists, tuples and dicts hash their items in order.
"""
from __future__ import annotations

import hashlib
import struct

import torch

_CANONICAL_NAN = {
    torch.float32: torch.tensor(0x7FC00000, dtype=torch.int32).view(torch.float32),
    torch.float64: torch.tensor(0x7FF8000000000000, dtype=torch.int64).view(torch.float64),
    torch.float16: torch.tensor(0x7E00, dtype=torch.int16).view(torch.float16),
    torch.bfloat16: torch.tensor(0x7FC0, dtype=torch.int16).view(torch.bfloat16),
}


_AS_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
           torch.float64: torch.int64, torch.bool: torch.uint8}


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().resolve_conj().resolve_neg().to("cpu").contiguous()
    nan = _CANONICAL_NAN.get(t.dtype)
    if nan is not None:
        t = torch.where(torch.isnan(t), nan, t)
    if t.dtype in _AS_INT:  # numpy has no bfloat16; hash the bit patterns
        t = t.view(_AS_INT[t.dtype])
    array = t.numpy()
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _feed(h, obj) -> None:
    if isinstance(obj, torch.Tensor):
        header = f"tensor:{str(obj.dtype).replace('torch.', '')}:{list(obj.shape)}".encode()
        h.update(struct.pack("<I", len(header)) + header)
        h.update(_tensor_bytes(obj))
    elif isinstance(obj, torch.nn.Module):
        h.update(b"module")
        _feed(h, obj.state_dict())
    elif isinstance(obj, torch.optim.Optimizer):
        h.update(b"optimizer")
        _feed(h, obj.state_dict())
    elif isinstance(obj, dict):
        h.update(b"dict" + struct.pack("<Q", len(obj)))
        for key, value in obj.items():
            _feed(h, key)
            _feed(h, value)
    elif isinstance(obj, (list, tuple)):
        h.update(b"list" + struct.pack("<Q", len(obj)))
        for item in obj:
            _feed(h, item)
    elif obj is None or isinstance(obj, (bool, int, float, str)):
        text = f"{type(obj).__name__}:{obj!r}".encode()
        h.update(struct.pack("<I", len(text)) + text)
    else:
        raise TypeError(f"repmode.digest cannot hash {type(obj).__name__}")


def digest(obj) -> str:
    """Hex SHA-256 of a tensor, module, state_dict, optimizer or nested list/tuple/dict of them."""
    from torch.utils._python_dispatch import _disable_current_modes

    h = hashlib.sha256()
    with _disable_current_modes():  # hashing is bookkeeping, not part of the computation
        _feed(h, obj)
    return h.hexdigest()
