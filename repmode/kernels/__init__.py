"""Kernel families. Importing this package registers every overload repmode supports;
each module is one family and its registrations are its table of contents."""
from . import (  # noqa: F401
    accumulate, elementwise, embedding, integer, matmul, passthrough, random, reduction, scatter, softmax_loss,
)
from . import foreach, fused_optim, losses  # noqa: F401,E402  (last: they call the ops registered above)
from . import layer_norm  # noqa: F401,E402
from . import attention  # noqa: F401,E402
from . import recurrent  # noqa: F401,E402
from . import losses_extra  # noqa: F401,E402
from . import indexing  # noqa: F401,E402
from . import training_utils  # noqa: F401,E402
from . import convolution  # noqa: F401,E402
from . import pooling  # noqa: F401,E402
from . import batch_norm  # noqa: F401,E402

import torch.distributed as _dist  # noqa: E402

if _dist.is_available():  # torch builds without distributed support have no c10d ops
    from . import collectives  # noqa: F401
