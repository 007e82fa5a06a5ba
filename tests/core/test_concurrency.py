"""Threads and composition with other dispatch modes: the mode is per thread, concurrent blocks give
the serial bits, nesting reuses the active mode, and FakeTensorMode, meta tensors and other
TorchDispatchModes stacked inside or outside repmode work or raise a clear error."""
from __future__ import annotations

import logging
import threading

import pytest
import torch
import torch.nn.functional as F
from support import OpRecorder, assert_bitwise_equal
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

import repmode
from repmode.mode import active_mode


def _inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(64, 96, generator=g), torch.randn(96, 48, generator=g)


def _work(x, w):
    """A few kernels that would show a race: a matmul chain, a row reduction, softmax, a sum."""
    h = torch.tanh(x @ w)
    return {"h": h, "softmax": torch.softmax(h, -1), "sum": h.sum(0), "mean": h.mean()}


def test_a_thread_started_inside_a_block_runs_natively():
    seen = {}

    def probe():
        seen["stack"] = list(_get_current_dispatch_mode_stack())
        seen["active"] = active_mode()
        a, b = _inputs(1)
        seen["native"] = torch.equal(a @ b, seen["want"])

    a, b = _inputs(1)
    seen["want"] = a @ b  # native bits
    with repmode.enabled():
        t = threading.Thread(target=probe)
        t.start()
        t.join()
        assert active_mode() is not None  # ... while this thread is still inside its block
    assert seen["stack"] == [] and seen["active"] is None and seen["native"]


def test_two_threads_in_their_own_blocks_give_the_serial_bits():
    inputs = [_inputs(10), _inputs(11)]
    dynamo_log = logging.getLogger("torch._dynamo.convert_frame")
    level_before = dynamo_log.level
    with repmode.enabled():
        serial = [_work(*xs) for xs in inputs]
    results, errors = [None, None], []
    barrier = threading.Barrier(2)

    def run(i):
        try:
            barrier.wait()
            for _ in range(20):  # overlap the two blocks for a while
                with repmode.enabled():
                    results[i] = _work(*inputs[i])
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(2):
        for k in serial[i]:
            assert_bitwise_equal(results[i][k], serial[i][k], f"thread {i} {k}")
    assert active_mode() is None
    # every block lowers Dynamo's skip logger to DEBUG while open (see _compile_notice.py); blocks
    # overlapping on two threads used to leave it at DEBUG for good
    assert dynamo_log.level == level_before and not dynamo_log.filters


def test_random_streams_of_concurrent_blocks_are_shared_and_locked():
    # repmode's default stream is one per process (like torch's generator): two threads drawing
    # at once take disjoint blocks, so together they draw exactly the serial set of values.
    repmode.manual_seed(5)
    with repmode.enabled():
        serial = torch.cat([torch.rand(1000) for _ in range(8)])
    repmode.manual_seed(5)
    drawn, lock = [], threading.Lock()

    def run():
        with repmode.enabled():
            for _ in range(4):
                r = torch.rand(1000)
                with lock:
                    drawn.append(r)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = torch.cat(drawn)
    assert torch.equal(got.sort().values, serial.sort().values)


def test_nesting_reuses_the_active_mode():
    eye = torch.eye(2)
    with repmode.enabled() as outer:
        mode = active_mode()
        with repmode.enabled(strict=False) as inner:
            assert active_mode() is mode
            assert len([m for m in _get_current_dispatch_mode_stack() if isinstance(m, repmode.ReproducibleMode)]) == 1
            assert mode.strict is False
            torch.linalg.eigvals(eye)                  # non-strict inside: reported ...
        assert mode.strict is True                               # ... and the outer settings come back
        assert [r.overload for r in inner.report()] == ["aten.linalg_eig.default"]
        assert outer.report() == []
        with pytest.raises(repmode.UnsupportedOpError):
            torch.linalg.eigvals(eye)
    assert active_mode() is None


# ---- other dispatch modes and fake/meta tensors --------------------------------------------------

def test_a_user_mode_inside_repmode_sees_the_ops_and_gets_repmodes_bits():
    x, w = _inputs(3)
    with repmode.enabled():
        want = _work(x, w)
    rec = OpRecorder()  # a user's mode
    with repmode.enabled(), rec:
        got = _work(x, w)
    assert "aten.mm.default" in rec.seen and "aten.tanh.default" in rec.seen
    for k in want:
        assert_bitwise_equal(got[k], want[k], k)


def test_repmode_inside_a_user_mode_gets_repmodes_bits():
    x, w = _inputs(4)
    with repmode.enabled():
        want = _work(x, w)
    rec = OpRecorder()  # a user's mode
    with rec, repmode.enabled():
        got = _work(x, w)
    for k in want:
        assert_bitwise_equal(got[k], want[k], k)
    # repmode sees the ops first; the user's mode sees what repmode's kernels run natively
    assert "aten.mm.default" not in rec.seen


@pytest.mark.parametrize("order", ["fake inside repmode", "repmode inside fake"])
def test_fake_tensor_mode_propagates_shapes(order):
    def model(x, w, b):
        return F.layer_norm(torch.relu(F.linear(x, w, b)), (5,)).sum(-1)

    fake_mode = FakeTensorMode()
    if order == "fake inside repmode":
        with repmode.enabled(), fake_mode:
            out = model(torch.empty(4, 3), torch.empty(5, 3), torch.empty(5))
    else:
        with fake_mode, repmode.enabled():
            out = model(torch.empty(4, 3), torch.empty(5, 3), torch.empty(5))
    assert isinstance(out, FakeTensor) and out.shape == (4,)
    with fake_mode:
        fx = fake_mode.from_tensor(torch.randn(4, 3))
    with repmode.enabled():
        out = fx @ fake_mode.from_tensor(torch.randn(3, 2))        # fake tensors as inputs: no crash
    assert isinstance(out, FakeTensor) and out.shape == (4, 2)


def test_other_tensor_subclasses_are_refused_clearly():
    class Wrapped(torch.Tensor):
        @staticmethod
        def __new__(cls, inner):
            return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

        def __init__(self, inner):
            self.inner = inner

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            unwrap = lambda t: t.inner if isinstance(t, Wrapped) else t  # noqa: E731
            return func(*[unwrap(a) for a in args], **(kwargs or {}))

    w = Wrapped(torch.randn(3))
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="tensor subclasses.*Wrapped"):
        torch.exp(w)
    with pytest.warns(repmode.UnsupportedOpWarning), repmode.enabled(strict=False) as rm:
        out = torch.exp(w)
    assert torch.equal(out, torch.exp(w.inner))
    assert [r.overload for r in rm.report()] == ["aten.exp.default"]


def test_meta_tensors_view_ops_work_and_compute_ops_are_refused():
    m = torch.empty(4, 6, device="meta")
    with repmode.enabled():
        v = m.view(6, 4).t()
        assert v.device.type == "meta" and v.shape == (4, 6)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="meta"):
        m @ m.t()


def test_plain_subclasses_like_parameter_run_through_the_kernels():
    # nn.Parameter / nn.Buffer add no __torch_dispatch__: their memory holds their values, so
    # repmode computes on them (the Transformer's fast path calls aten ops on Parameters directly)
    p = torch.nn.Parameter(torch.randn(4, 4))
    b = torch.nn.Buffer(torch.randn(4, 4))
    with repmode.enabled():
        got = torch.ops.aten.mm.default(p, b)
        detached = torch.ops.aten.detach.default(p)
    with repmode.enabled():
        plain = torch.ops.aten.mm.default(p.detach().clone(), b.clone())
    assert torch.equal(got.view(torch.int32), plain.view(torch.int32))
    assert torch.equal(detached, p.detach())
