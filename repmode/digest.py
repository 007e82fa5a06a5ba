"""``repmode.digest(obj)``: a SHA-256 of values, independent of device and memory layout.

What is hashed (this layout is part of repmode's stable interface; tests/core/test_digest.py pins
it with recorded constants):

* a tensor: a header ``tensor:<dtype>:<shape>`` (length-prefixed), then its elements in
  row-major order as a contiguous little-endian copy on the CPU. Every floating NaN (also the
  parts of complex values) becomes one canonical bit pattern of its dtype, so payloads that
  differ between CPUs and GPUs hash the same. Everything else is hashed bit for bit: ``-0.0``
  and ``+0.0`` differ, as they do in the results.
* a module: its ``state_dict()`` — parameters and persistent buffers, with names, in order;
* an optimizer: its ``state_dict()`` (per-parameter state and the param groups' settings);
* any other object with a ``state_dict()`` method (LR schedulers, GradScaler): that dict;
* dicts (keys and values, in order), lists and tuples (items in order), and ``None``, bools,
  ints, floats and strings (by type and ``repr``).
"""
from __future__ import annotations

import hashlib
import struct
import sys

import numpy as np
import torch

# One NaN per floating dtype (bit patterns): the quiet NaN with a clear sign and payload.
_CANONICAL_NAN_BITS = {
    torch.float64: 0x7FF8000000000000,
    torch.float32: 0x7FC00000,
    torch.float16: 0x7E00,
    torch.bfloat16: 0x7FC0,
    torch.float8_e4m3fn: 0x7F,
    torch.float8_e5m2: 0x7F,
    torch.float8_e4m3fnuz: 0x80,  # the fnuz formats have a single NaN, 0x80
    torch.float8_e5m2fnuz: 0x80,
}

# Elements are hashed as signed integers of their size (an exact view of the bits).
_BITS_DTYPE = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_LITTLE_ENDIAN = {1: "<i1", 2: "<i2", 4: "<i4", 8: "<i8"}

# IEEE-style formats: a value is NaN iff (bits & magnitude mask) > the infinity pattern.
_NAN_TEST = {
    torch.float64: (0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000),
    torch.float32: (0x7FFFFFFF, 0x7F800000),
    torch.float16: (0x7FFF, 0x7C00),
    torch.bfloat16: (0x7FFF, 0x7F80),
    torch.float8_e5m2: (0x7F, 0x7C),
}


_NUMPY_FLOATS = (torch.float64, torch.float32, torch.float16)


def _signed(value: int, nbytes: int) -> int:
    bits = 8 * nbytes
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _element_bits(t: torch.Tensor) -> np.ndarray:
    """The elements of a contiguous CPU tensor as a flat integer array of their bits, NaNs canonical."""
    flat = t.reshape(-1)
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)  # (re, im) pairs: the same bytes as the complex values
    size = flat.element_size()
    bits = flat.view(_BITS_DTYPE[size]).numpy()
    if not flat.is_floating_point():
        return bits
    nan = _CANONICAL_NAN_BITS.get(flat.dtype)
    if nan is None:
        raise TypeError(f"repmode.digest has no canonical NaN for {flat.dtype}")
    if flat.dtype in _NUMPY_FLOATS:
        is_nan = np.isnan(flat.numpy())
    elif flat.dtype in _NAN_TEST:
        magnitude, infinity = _NAN_TEST[flat.dtype]
        unsigned = bits.view(f"u{size}")
        is_nan = (unsigned & unsigned.dtype.type(magnitude)) > unsigned.dtype.type(infinity)
    else:  # float8 formats without an infinity: ask torch
        is_nan = torch.isnan(flat).numpy()
    if is_nan.any():
        bits = bits.copy()
        bits[is_nan] = _signed(nan, size)
    return bits


def _tensor_bytes(t: torch.Tensor):
    """The hashed bytes of a tensor's elements (a buffer: bytes or a contiguous array)."""
    if t.is_sparse or t.layout != torch.strided:
        raise TypeError(f"repmode.digest hashes dense tensors; convert this {t.layout} tensor with .to_dense()")
    if t.is_quantized or getattr(t, "is_nested", False):
        raise TypeError("repmode.digest cannot hash quantized or nested tensors")
    if t.device.type == "meta":
        raise TypeError("repmode.digest cannot hash a meta tensor: it has no values")
    t = t.detach()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    if t.device.type != "cpu":
        t = t.to("cpu")
    bits = _element_bits(t.contiguous())
    order = _LITTLE_ENDIAN[bits.dtype.itemsize]
    if sys.byteorder != "little" or bits.dtype.str != order:
        bits = bits.astype(order)
    return memoryview(bits).cast("B")


def _feed_text(h, text: str) -> None:
    data = text.encode()
    h.update(struct.pack("<I", len(data)) + data)


def _feed(h, obj) -> None:
    if isinstance(obj, torch.Tensor):
        _feed_text(h, f"tensor:{str(obj.dtype).replace('torch.', '')}:{list(obj.shape)}")
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
        _feed_text(h, f"{type(obj).__name__}:{obj!r}")
    elif callable(getattr(obj, "state_dict", None)):
        h.update(b"state")
        _feed(h, obj.state_dict())
    else:
        raise TypeError(f"repmode.digest cannot hash {type(obj).__name__} (tensors, modules, optimizers, "
                        "objects with a state_dict(), dicts, lists, tuples and plain scalars can be hashed)")


def tensor_digest(t: torch.Tensor) -> str:
    """``digest(t)`` for one tensor, for callers already outside every dispatch mode (the tracer)."""
    h = hashlib.sha256()
    _feed(h, t)
    return h.hexdigest()


def digest(obj) -> str:
    """Hex SHA-256 of a tensor, module, optimizer, state_dict or nested list/tuple/dict of them.

    Equal values give equal digests whatever their device, strides or NaN payloads; a
    different dtype or shape gives a different digest. Stable across repmode versions."""
    from torch.utils._python_dispatch import _disable_current_modes

    h = hashlib.sha256()
    with _disable_current_modes():  # hashing is bookkeeping, not part of the computation
        _feed(h, obj)
    return h.hexdigest()
