"""Checks of repmode's collectives, run in every rank of a gloo group by tests/system/test_distributed.py:

    torchrun --standalone --nproc_per_node=3 tests/support/distributed_checks.py OUT_DIR

Each rank writes OUT_DIR/rank<r>.json: {check name: "ok" or what went wrong}. Every rank builds
every rank's inputs from fixed seeds, so it can compute the expected result itself: the left
fold over ranks 0..W-1 (docs/semantics.md "Collectives"). Three ranks, because with two an
addition is commutative and any order gives the same bits.
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

import repmode
from repmode.errors import UnsupportedOpError

if __name__ == "__main__":  # run as a script, its folder (tests/support) is on sys.path; the package needs tests/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support import bits  # noqa: E402

CHECKS: dict[str, callable] = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def rank_inputs(seed: int, shape, dtype=torch.float32) -> list[torch.Tensor]:
    """Every rank's input: values spread over 14 decades, so the order of a sum shows."""
    out = []
    for r in range(dist.get_world_size()):
        g = torch.Generator().manual_seed(seed * 100 + r)
        scale = 10.0 ** torch.randint(-6, 8, shape, generator=g).double()
        values = torch.randn(shape, generator=g, dtype=torch.float64) * scale
        out.append(values.to(dtype) if dtype.is_floating_point else torch.randint(-1000, 1000, shape, generator=g,
                                                                                  dtype=dtype))
    return out


def fold(values: list[torch.Tensor], step) -> torch.Tensor:
    acc = values[0].clone()
    for v in values[1:]:
        acc = step(acc, v)
    return acc


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def me() -> int:
    return dist.get_rank()


# ---- reducing collectives: the rank-order fold ------------------------------------------------

def _allreduce_case(seed, op, dtype, step, shape=(1001,)):
    inputs = rank_inputs(seed, shape, dtype)
    with repmode.enabled():
        want = fold(inputs, step)
        got = inputs[me()].clone()
        dist.all_reduce(got, op=op)
    expect(same_bits(got, want), f"all_reduce {op} {dtype}: {int((got != want).sum())} elements differ")


@check
def all_reduce_sum_float32():
    _allreduce_case(1, dist.ReduceOp.SUM, torch.float32, torch.add)


@check
def all_reduce_sum_bfloat16_and_float64():
    _allreduce_case(2, dist.ReduceOp.SUM, torch.bfloat16, torch.add)
    _allreduce_case(3, dist.ReduceOp.SUM, torch.float64, torch.add)


@check
def all_reduce_avg_is_sum_then_one_division():
    inputs = rank_inputs(4, (77,))
    with repmode.enabled():
        want = fold(inputs, torch.add) / torch.tensor(float(dist.get_world_size()))
        got = inputs[me()].clone()
        dist.all_reduce(got, op=dist.ReduceOp.AVG)
    expect(same_bits(got, want), "AVG differs from SUM / W")


@check
def all_reduce_product_min_max():
    _allreduce_case(5, dist.ReduceOp.PRODUCT, torch.float32, torch.mul)
    _allreduce_case(6, dist.ReduceOp.MIN, torch.float32, torch.minimum)
    _allreduce_case(7, dist.ReduceOp.MAX, torch.float32, torch.maximum)


@check
def all_reduce_integers_and_bitwise():
    _allreduce_case(8, dist.ReduceOp.SUM, torch.int64, torch.add)
    _allreduce_case(9, dist.ReduceOp.BXOR, torch.int32, torch.bitwise_xor)
    _allreduce_case(10, dist.ReduceOp.BAND, torch.int32, torch.bitwise_and)


@check
def all_reduce_of_a_transposed_view_in_place():
    inputs = [t.view(13, 7).t() for t in rank_inputs(11, (91,))]
    with repmode.enabled():
        want = fold(inputs, torch.add)
        got = inputs[me()].clone().t().contiguous().t()  # same values, transposed layout
        dist.all_reduce(got)
    expect(same_bits(got, want), "transposed all_reduce differs")
    expect(got.stride() == (1, 7), f"the tensor's layout changed: {got.stride()}")


@check
def all_reduce_of_a_tensor_smaller_than_the_world_and_of_an_empty_one():
    _allreduce_case(12, dist.ReduceOp.SUM, torch.float32, torch.add, shape=(1,))
    _allreduce_case(13, dist.ReduceOp.SUM, torch.float32, torch.add, shape=(0,))
    _allreduce_case(14, dist.ReduceOp.SUM, torch.float32, torch.add, shape=())


@check
def native_gloo_sum_is_not_in_rank_order():
    """What repmode fixes: gloo's own all-reduce sums these in another order somewhere."""
    inputs = rank_inputs(15, (10001,))
    native = inputs[me()].clone()
    dist.all_reduce(native)
    with repmode.enabled():
        want = fold(inputs, torch.add)
    expect(not same_bits(native, want), "gloo happened to sum every element in rank order")


@check
def reduce_to_a_root_writes_only_the_root():
    inputs = rank_inputs(16, (50,))
    with repmode.enabled():
        want = fold(inputs, torch.add)
        got = inputs[me()].clone()
        dist.reduce(got, dst=1)
    expect(same_bits(got, want if me() == 1 else inputs[me()]), "reduce: wrong tensor on this rank")


@check
def reduce_scatter_tensor_and_list():
    world = dist.get_world_size()
    inputs = rank_inputs(17, (world * 40,))
    with repmode.enabled():
        want = fold(inputs, torch.add).view(world, 40)[me()]
        got = torch.empty(40)
        dist.reduce_scatter_tensor(got, inputs[me()].clone())
        got_list = torch.empty(40)
        dist.reduce_scatter(got_list, list(inputs[me()].clone().view(world, 40).unbind(0)))
    expect(same_bits(got, want), "reduce_scatter_tensor differs from the fold")
    expect(same_bits(got_list, want), "reduce_scatter (list) differs from the fold")


@check
def functional_all_reduce():
    inputs = rank_inputs(18, (300,))
    with repmode.enabled():
        want = fold(inputs, torch.add)
        got = funcol.all_reduce(inputs[me()].clone(), "sum", dist.group.WORLD)
        got = funcol.wait_tensor(got) if isinstance(got, torch.Tensor) else got
    expect(same_bits(torch.as_tensor(got), want), "functional all_reduce differs from the fold")


@check
def data_movement_keeps_every_bit():
    payload = torch.tensor([0x7FC00001, -0x3FFFFF00, 1, 0x80000000 - (1 << 32)], dtype=torch.int64)
    mine = (payload + me()).to(torch.int32).view(torch.float32)  # NaNs with payloads, -0.0, a subnormal
    with repmode.enabled():
        gathered = [torch.empty(4) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, mine)
        root = mine.clone()
        dist.broadcast(root, src=2)
    for r, g in enumerate(gathered):
        expect(same_bits(g, (payload + r).to(torch.int32).view(torch.float32)), f"all_gather: rank {r}'s bits")
    expect(same_bits(root, (payload + 2).to(torch.int32).view(torch.float32)), "broadcast changed bits")


# ---- DDP ----------------------------------------------------------------------------------------

@check
def ddp_gradients_are_the_rank_order_fold_of_the_local_ones():
    """DDP unchanged: the gradients it leaves are fold(rank r's local gradient x (1/W)), which
    only repmode's all-reduce gives (native gloo sums in another order)."""
    world = dist.get_world_size()
    x = [torch.randn(16, 20, generator=torch.Generator().manual_seed(r)) * 10.0 ** (3 * r) for r in range(world)]
    with repmode.enabled(seed=0):
        model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
        local = []
        for r in range(world):  # each rank's own gradients, computed here for every rank
            model.zero_grad()
            model(x[r]).sum().backward()
            local.append([p.grad.clone() * (1.0 / world) for p in model.parameters()])
        model.zero_grad()
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        ddp(x[me()]).sum().backward()
    for i, p in enumerate(model.parameters()):
        want = fold([grads[i] for grads in local], torch.add)
        expect(same_bits(p.grad, want), f"parameter {i}: DDP gradient is not the rank-order fold")


# ---- refusals --------------------------------------------------------------------------------

def _raises_unsupported(fn, *words) -> None:
    try:
        fn()
    except UnsupportedOpError as e:
        missing = [w for w in words if w not in str(e)]
        expect(not missing, f"the message lacks {missing}: {e}")
        return
    raise AssertionError("no UnsupportedOpError")


@check
def unregistered_collective_is_refused_in_strict_mode():
    def recv_any():
        with repmode.enabled():
            dist.recv(torch.empty(3))  # no src: receive from any rank
    _raises_unsupported(recv_any, "c10d.recv_any_source_", "no reproducible implementation")


@check
def unsupported_reductions_are_refused():
    def avg_int():
        with repmode.enabled():
            dist.all_reduce(torch.ones(3, dtype=torch.int64), op=dist.ReduceOp.AVG)

    def bitwise_float():
        with repmode.enabled():
            dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BOR)

    def premul_sum():
        with repmode.enabled():
            dist.all_reduce(torch.ones(3), op=dist._make_nccl_premul_sum(2.0))
    _raises_unsupported(avg_int, "AVG", "int64")
    _raises_unsupported(bitwise_float, "BOR", "float32")
    _raises_unsupported(premul_sum, "PREMUL_SUM")


@check
def complex_sum_is_the_fold_of_real_views():
    """torch.distributed hands complex tensors over as view_as_real: real and imaginary parts
    are each folded in rank order."""
    inputs = [torch.complex(a, b) for a, b in zip(rank_inputs(19, (40,)), rank_inputs(20, (40,)))]
    with repmode.enabled():
        want = fold([torch.view_as_real(t) for t in inputs], torch.add)
        got = inputs[me()].clone()
        dist.all_reduce(got)
    expect(same_bits(torch.view_as_real(got), want), "complex all_reduce differs from the fold of real views")


def main(out_dir: str) -> None:
    dist.init_process_group("gloo")
    results = {}
    for name, fn in CHECKS.items():
        dist.barrier()
        try:
            fn()
            results[name] = "ok"
        except Exception:  # noqa: BLE001  (reported to the test, which fails on it)
            results[name] = traceback.format_exc(limit=4)
    Path(out_dir, f"rank{dist.get_rank()}.json").write_text(json.dumps(results, indent=1))
    # no rank tears down its gloo connections while another still uses them (a peer's gloo thread
    # then aborts the process: "terminate called without an active exception")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
