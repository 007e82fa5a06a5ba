"""Linear algebra: what repmode refuses for now, and why (the reason is the user's error message).

LAPACK and vendor solvers choose blocked algorithms, pivots and iteration counts by hardware, so
their factorizations differ between machines; until repmode has fixed-order ones these ops are
refused with advice rather than run natively.
"""
from __future__ import annotations

import torch

from ..registry import register_refusal

aten = torch.ops.aten

register_refusal(
    [aten.linalg_qr.default],
    "QR (reached by nn.init.orthogonal_) has no fixed-order implementation in repmode yet; initialise those "
    "parameters outside the mode (for example with torch.manual_seed and torch.nn.init.orthogonal_ before "
    "entering it) or use another initialiser.",
    family="linalg",
)
