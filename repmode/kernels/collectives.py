"""torch.distributed collectives (the ``c10d`` ops and ``_c10d_functional``): data movement
passes through; reductions are rebuilt from exact data movement and a fold over ranks in rank
order. docs/semantics.md "Collectives (torch.distributed)", docs/distributed.md.

A native all-reduce sums in an order set by the backend's algorithm (ring, tree, halving-
doubling), the topology and the chunking, so the same gradients can reduce to different bits on
another cluster or backend. Here every reducing collective is, for each element:

    acc = x_0;  acc = acc (op) x_1;  ...;  acc = acc (op) x_{W-1}     (x_r: rank r's value)

with repmode's elementwise kernels (one IEEE operation per step), AVG = that SUM divided by W.
The values travel by two exact collectives: an all-to-all that hands rank r the r-th chunk of
every rank's tensor (so each rank folds one chunk, in rank order), then an all-gather of the
folded chunks. That moves 2(W-1)/W of the tensor per rank, the same as a ring all-reduce.

The communication runs to completion inside the op (the returned ``Work`` is already done), so
a caller cannot overlap it with computation; DDP still works unchanged through it.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives  # noqa: F401  (defines the Python-side functional ops)

from ..registry import overloads_named, register_kernel, register_passthrough
from ._common import call_registered, unsupported

aten = torch.ops.aten

# c10d's RedOpType codes (ReduceOp.op() of the boxed ScriptObject), and the functional names.
_REDUCE_CODES = {0: "sum", 1: "avg", 2: "product", 3: "min", 4: "max", 5: "band", 6: "bor", 7: "bxor",
                 8: "premul_sum"}
_FOLD_STEP = {"sum": aten.add.Tensor, "avg": aten.add.Tensor, "product": aten.mul.Tensor,
              "min": aten.minimum.default, "max": aten.maximum.default, "band": aten.bitwise_and.Tensor,
              "bor": aten.bitwise_or.Tensor, "bxor": aten.bitwise_xor.Tensor}
_FLOATING = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
# The registry's dtype tags for the reducing collectives: the dtypes of the elementwise folds.
REDUCING_DTYPES = ("float32", "float64", "widened", "integer")


def _reduce_kind(func, args, kwargs, reduce_op) -> str:
    name = reduce_op.lower() if isinstance(reduce_op, str) else _REDUCE_CODES.get(reduce_op.op(), "unknown")
    if name not in _FOLD_STEP:
        raise unsupported(func, args, kwargs,
                          f"reduce op {name.upper()} is not supported (PREMUL_SUM's factor is held by the backend; "
                          "use SUM and multiply the result)")
    return name


def _check_dtype(func, args, kwargs, tensor: torch.Tensor, kind: str) -> None:
    bitwise = kind in ("band", "bor", "bxor")
    if tensor.is_complex() or (tensor.is_floating_point() and tensor.dtype not in _FLOATING):
        raise unsupported(func, args, kwargs, f"{tensor.dtype} is not supported by repmode's reducing collectives")
    if bitwise and tensor.is_floating_point():
        raise unsupported(func, args, kwargs, f"{kind.upper()} needs an integer or bool tensor, not {tensor.dtype}")
    if kind == "avg" and not tensor.is_floating_point():
        raise unsupported(func, args, kwargs, f"AVG of {tensor.dtype} is not defined (integer division); use SUM")
    if tensor.dtype == torch.bool and not bitwise:
        raise unsupported(func, args, kwargs, f"{kind.upper()} of bool tensors is not supported; use BOR/BAND")


def fold_over_ranks(stacked: torch.Tensor, kind: str) -> torch.Tensor:
    """Row r of ``stacked`` is rank r's values: combine rows 0, 1, ..., W-1 left to right."""
    step = _FOLD_STEP[kind]
    acc = stacked[0].clone()
    for r in range(1, stacked.shape[0]):
        acc = call_registered(step, acc, stacked[r])
    if kind == "avg":
        acc = call_registered(aten.div.Tensor, acc, torch.tensor(stacked.shape[0], dtype=acc.dtype))
    return acc


def _wait(work) -> None:
    if work is not None:
        work.wait()


def _reduce_chunks(pg, chunks: torch.Tensor, kind: str) -> torch.Tensor:
    """``chunks`` (W, n), contiguous: row j goes to rank j. Returns this rank's row of the
    reduction: the fold over ranks of every rank's row ``pg.rank()``."""
    received = torch.empty_like(chunks)
    _wait(pg.alltoall_base(received.view(-1), chunks.view(-1), [], []))
    return fold_over_ranks(received, kind)


def _all_reduce_into(pg, tensor: torch.Tensor, kind: str) -> None:
    """Reduce ``tensor`` over the group in place: all-to-all, fold, all-gather."""
    world, n = pg.size(), tensor.numel()
    if n == 0:
        return
    chunk = -(-n // world)
    in_place = tensor.is_contiguous() and n == world * chunk  # no padding, no copies
    if in_place:
        padded = tensor.view(-1)
    else:
        padded = torch.zeros(world * chunk, dtype=tensor.dtype, device=tensor.device)
        padded[:n] = tensor.reshape(-1)
    mine = _reduce_chunks(pg, padded.view(world, chunk), kind)
    # the all-to-all has completed, so the input's memory may receive the result
    _wait(pg._allgather_base(padded, mine))
    if not in_place:
        tensor.copy_(padded[:n].view(tensor.shape))


def _done_work(result):
    """A completed ``Work`` whose future holds ``result`` (what DDP's reducer reads back)."""
    future = torch.futures.Future()
    future.set_result(result)
    return torch._C._distributed_c10d._create_work_from_future(future).boxed()  # ops return boxed Works


def _process_group(boxed):
    return dist.ProcessGroup.unbox(boxed)


def _check_tensors(func, args, kwargs, tensors, kind: str) -> None:
    for t in tensors:
        if t.layout != torch.strided or t.is_quantized or t.is_nested:
            what = "quantized" if t.is_quantized else "nested" if t.is_nested else str(t.layout).replace("torch.", "")
            raise unsupported(func, args, kwargs, f"{what} tensors are not supported by repmode's reducing "
                                                  "collectives (dense, strided tensors only)")
        if not t.is_cpu:
            raise unsupported(func, args, kwargs, f"tensors on {t.device} need repmode's {t.device.type.upper()} "
                                                  "kernels; this build of repmode has CPU kernels only")
        _check_dtype(func, args, kwargs, t, kind)


@register_kernel(torch.ops.c10d.allreduce_.default, REDUCING_DTYPES)
def allreduce(func, args, kwargs):
    tensors, pg, reduce_op, sparse_indices = args[:4]
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    if sparse_indices is not None:
        raise unsupported(func, args, kwargs, "sparse all-reduce is not supported")
    _check_tensors(func, args, kwargs, tensors, kind)
    pg = _process_group(pg)
    for t in tensors:
        _all_reduce_into(pg, t, kind)
    return tensors, _done_work(tensors)


@register_kernel(torch.ops.c10d.allreduce_coalesced_.default, REDUCING_DTYPES)
def allreduce_coalesced(func, args, kwargs):
    tensors, pg, reduce_op = args[:3]
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    _check_tensors(func, args, kwargs, tensors, kind)
    pg = _process_group(pg)
    for t in tensors:
        _all_reduce_into(pg, t, kind)
    return _done_work(tensors)


@register_kernel(torch.ops.c10d.reduce_.default, REDUCING_DTYPES)
def reduce(func, args, kwargs):
    """Every rank computes the reduction (as all-reduce does); only the root's tensor is
    written. The other ranks' tensors keep their values (torch leaves them unspecified)."""
    tensors, pg, reduce_op, root_rank = args[:4]
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    _check_tensors(func, args, kwargs, tensors, kind)
    pg = _process_group(pg)
    for t in tensors:
        result = t.clone()
        _all_reduce_into(pg, result, kind)
        if pg.rank() == root_rank:
            t.copy_(result)
    return _done_work(tensors)


def _reduce_scatter_into(pg, output: torch.Tensor, pieces: torch.Tensor, kind: str) -> None:
    """``pieces`` (W, output.numel()): row j is this rank's contribution to rank j's output."""
    if output.numel() == 0:
        return
    output.copy_(_reduce_chunks(pg, pieces.contiguous(), kind).view(output.shape))


def _check_reduce_scatter(func, args, kwargs, output, inputs, world, kind) -> None:
    _check_tensors(func, args, kwargs, [output, *inputs], kind)
    if sum(t.numel() for t in inputs) != world * output.numel():
        raise unsupported(func, args, kwargs, f"the input must hold world_size ({world}) x the output's "
                                              f"{output.numel()} elements")


@register_kernel(torch.ops.c10d.reduce_scatter_.default, REDUCING_DTYPES)
def reduce_scatter(func, args, kwargs):
    outputs, input_lists, pg, reduce_op = args[:4]
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    pg = _process_group(pg)
    for output, inputs in zip(outputs, input_lists):
        _check_reduce_scatter(func, args, kwargs, output, inputs, pg.size(), kind)
        pieces = torch.stack([t.reshape(-1) for t in inputs]) if inputs else output.new_empty((0, 0))
        _reduce_scatter_into(pg, output, pieces, kind)
    return outputs, _done_work(outputs)


@register_kernel(torch.ops.c10d._reduce_scatter_base_.default, REDUCING_DTYPES)
def reduce_scatter_base(func, args, kwargs):
    output, input_, pg, reduce_op = args[:4]
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    pg = _process_group(pg)
    _check_reduce_scatter(func, args, kwargs, output, [input_], pg.size(), kind)
    _reduce_scatter_into(pg, output, input_.reshape(pg.size(), -1), kind)
    return output, _done_work(output)


@register_kernel(torch.ops.c10d.reduce_scatter_tensor_coalesced_.default,
                 REDUCING_DTYPES)
def reduce_scatter_tensor_coalesced(func, args, kwargs):
    outputs, inputs, pg, reduce_op = args[:4]
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    pg = _process_group(pg)
    for output, input_ in zip(outputs, inputs):
        _check_reduce_scatter(func, args, kwargs, output, [input_], pg.size(), kind)
        _reduce_scatter_into(pg, output, input_.reshape(pg.size(), -1), kind)
    return _done_work(outputs)


# ---- functional collectives (torch.distributed._functional_collectives, DTensor, compiled code) ----

def _functional_group(group_name):
    if isinstance(group_name, dist.ProcessGroup):
        return group_name
    return dist.distributed_c10d._resolve_process_group(group_name)


def _functional_all_reduce(func, args, kwargs, tensors, reduce_op, group_name) -> None:
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    _check_tensors(func, args, kwargs, tensors, kind)
    pg = _functional_group(group_name)
    for t in tensors:
        _all_reduce_into(pg, t, kind)


@register_kernel(overloads_named("_c10d_functional.all_reduce.default"), REDUCING_DTYPES)
def functional_all_reduce(func, args, kwargs):
    out = args[0].clone()
    _functional_all_reduce(func, args, kwargs, [out], args[1], args[2])
    return out


@register_kernel(overloads_named("_c10d_functional.all_reduce_.default"), REDUCING_DTYPES)
def functional_all_reduce_inplace(func, args, kwargs):
    _functional_all_reduce(func, args, kwargs, [args[0]], args[1], args[2])
    return args[0]


@register_kernel(overloads_named("_c10d_functional.all_reduce_coalesced.default"), REDUCING_DTYPES)
def functional_all_reduce_coalesced(func, args, kwargs):
    outs = [t.clone() for t in args[0]]
    _functional_all_reduce(func, args, kwargs, outs, args[1], args[2])
    return outs


@register_kernel(overloads_named("_c10d_functional.all_reduce_coalesced_.default"), REDUCING_DTYPES)
def functional_all_reduce_coalesced_inplace(func, args, kwargs):
    _functional_all_reduce(func, args, kwargs, args[0], args[1], args[2])
    return args[0]


def _functional_reduce_scatter(func, args, kwargs, input_, reduce_op, group_size, group_name, out=None):
    kind = _reduce_kind(func, args, kwargs, reduce_op)
    pg = _functional_group(group_name)
    if input_.dim() == 0 or input_.shape[0] % group_size:
        raise unsupported(func, args, kwargs, f"dim 0 of the input ({tuple(input_.shape)}) must be a multiple of "
                                              f"the group size {group_size}")
    if out is None:
        out = input_.new_empty((input_.shape[0] // group_size, *input_.shape[1:]))
    _check_reduce_scatter(func, args, kwargs, out, [input_], pg.size(), kind)
    _reduce_scatter_into(pg, out, input_.reshape(pg.size(), -1), kind)
    return out


@register_kernel(overloads_named("_c10d_functional.reduce_scatter_tensor.default",
                                 "_c10d_functional_autograd.reduce_scatter_tensor.default"), REDUCING_DTYPES,
                 out=overloads_named("_c10d_functional.reduce_scatter_tensor_out.default"))
def functional_reduce_scatter(func, args, kwargs):
    return _functional_reduce_scatter(func, args, kwargs, *args[:4])


@register_kernel(overloads_named("_c10d_functional.reduce_scatter_tensor_coalesced.default"), REDUCING_DTYPES)
def functional_reduce_scatter_coalesced(func, args, kwargs):
    inputs, reduce_op, group_size, group_name = args[:4]
    return [_functional_reduce_scatter(func, args, kwargs, t, reduce_op, group_size, group_name) for t in inputs]


# ---- data movement and synchronisation: exact, torch's own -----------------------------------

register_passthrough(overloads_named(
    "c10d.broadcast_.default", "c10d.allgather_.default", "c10d._allgather_base_.default",
    "c10d.allgather_coalesced_.default", "c10d.allgather_into_tensor_coalesced_.default", "c10d.gather_.default",
    "c10d.gather_into_tensor_.default",  # torch >= 2.14
    "c10d.scatter_.default", "c10d.alltoall_.default", "c10d.alltoall_base_.default", "c10d.send.default",
    "c10d.recv_.default",
    "_c10d_functional.all_gather_into_tensor.default", "_c10d_functional.all_gather_into_tensor_out.default",
    "_c10d_functional.all_gather_into_tensor_coalesced.default", "_c10d_functional.broadcast.default",
    "_c10d_functional.broadcast_.default", "_c10d_functional.all_to_all_single.default",
    "_c10d_functional.isend.default", "_c10d_functional.irecv.default", "_c10d_functional.batch_p2p_ops.default",
    "_c10d_functional_autograd.all_to_all_single.default", "_c10d_functional_autograd.all_gather_into_tensor.default",
    "_dtensor.shard_dim_alltoall.default",
), reason="collective data movement: every output element is one rank's element, copied bit for bit",
    family="collectives")

register_passthrough(overloads_named("c10d.barrier.default", "c10d.monitored_barrier_.default",
                                     "c10d.check_for_nan.default", "_c10d_functional.wait_tensor.default"),
                     reason="synchronisation or a NaN check: no tensor is written", family="collectives")

# FSDP2 (fully_shard) packs and unpacks its parameters and gradients with these custom ops
# (defined when torch.distributed.fsdp is imported; repmode imports it here so they can be named).
try:
    import torch.distributed.fsdp._fully_shard._fsdp_collectives  # noqa: F401
except ImportError:  # a torch without FSDP2: nothing to register
    pass
register_passthrough(overloads_named("fsdp.all_gather_copy_in.default", "fsdp.split_with_sizes_copy.default",
                                     "fsdp.chunk_cat.default"),
                     reason="FSDP2's packing of shards into a flat buffer and back (narrow and split views, copies, "
                            "zero padding): every output element is one input element or zero, copied bit for bit",
                     family="collectives")

register_passthrough(overloads_named("_c10d_functional._wrap_tensor_autograd.default"),
                     reason="wraps a functional collective's result for autograd (AsyncCollectiveTensor): "
                            "no data touched", family="collectives")
