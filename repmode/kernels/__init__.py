"""Kernel families. Importing this package registers every overload repmode supports;
each module is one family and its registrations are its table of contents."""
from . import (  # noqa: F401
    accumulate, elementwise, embedding, integer, matmul, passthrough, random, reduction, scatter, softmax_loss,
)
from . import foreach, fused_optim, losses  # noqa: F401,E402  (last: they call the ops registered above)
from . import batch_norm  # noqa: F401,E402
