"""Misuse gives a clear error (its type and a useful message), never a crash or a silent fallback:
unsupported dtypes and layouts, mixed devices, overlapping memory, and state after an exception."""
from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

import repmode
from repmode.kernels import registrations

aten = torch.ops.aten
UnsupportedOpError = repmode.UnsupportedOpError


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# One representative aten overload per kernel family, with inputs built from a float32 tensor
# (`make(conv)` applies `conv` to every floating tensor argument).
FAMILY_OPS = {
    "elementwise": lambda c: (aten.exp.default, (c(_x(3, 4)),)),
    "elementwise (binary)": lambda c: (aten.div.Tensor, (c(_x(3, 4)), c(_x(3, 4, seed=1)))),
    "reduction": lambda c: (aten.sum.default, (c(_x(3, 4)),)),
    "matmul": lambda c: (aten.mm.default, (c(_x(3, 4)), c(_x(4, 2, seed=1)))),
    "softmax_loss": lambda c: (aten._softmax.default, (c(_x(3, 4)), -1, False)),
    "layer_norm": lambda c: (aten.native_layer_norm.default, (c(_x(3, 4)), [4], None, None, 1e-5)),
    "batch_norm": lambda c: (aten.native_batch_norm.default, (c(_x(3, 4)), None, None, None, None, True, 0.1, 1e-5)),
    "convolution": lambda c: (aten.convolution.default, (c(_x(1, 1, 5, 5)), c(_x(1, 1, 3, 3, seed=1)), None, [1, 1],
                                                         [0, 0], [1, 1], False, [0, 0], 1)),
    "pooling": lambda c: (aten.max_pool2d_with_indices.default, (c(_x(1, 1, 4, 4)), [2, 2])),
    "accumulate": lambda c: (aten.index_add.default, (c(_x(3, 4)), 0, torch.tensor([0, 0, 1]), c(_x(3, 4, seed=1)))),
    "scatter": lambda c: (aten.scatter.src, (c(_x(3, 4)), 0, torch.tensor([[0, 1, 2, 0]]), c(_x(1, 4, seed=1)))),
    "indexing": lambda c: (aten.index_put.default, (c(_x(3, 4)), [torch.tensor([0, 0])], c(_x(2, 4, seed=1)), True)),
    "losses": lambda c: (aten.mse_loss.default, (c(_x(3, 4)), c(_x(3, 4, seed=1)))),
    "foreach": lambda c: (aten._foreach_div.List, ([c(_x(3, 4))], [c(_x(3, 4, seed=1))])),
    "random": lambda c: (aten.bernoulli.p, (c(_x(3, 4)), 0.5)),
    "attention": lambda c: (aten._scaled_dot_product_flash_attention_for_cpu.default,
                            (c(_x(1, 2, 3, 4)), c(_x(1, 2, 3, 4, seed=1)), c(_x(1, 2, 3, 4, seed=2)))),
}

DTYPES = {"complex64": lambda t: t.to(torch.complex64), "float8_e4m3fn": lambda t: t.to(torch.float8_e4m3fn)}
LAYOUTS = {
    "sparse COO": lambda t: t.to_sparse(),
    "sparse CSR": lambda t: t.to_sparse_csr() if t.dim() == 2 else t.to_sparse(),
    "quantized": lambda t: torch.quantize_per_tensor(t, 0.1, 0, torch.qint8),
}


def _expect_refusal(family, conv, names):
    op, args = FAMILY_OPS[family](conv)
    with repmode.enabled(), pytest.raises(UnsupportedOpError) as err:
        op(*args)
    msg = str(err.value)
    assert str(op) in msg or "aten." in msg, msg
    assert any(n in msg for n in names), f"{family}: the message does not name it: {msg}"
    assert "called at" in msg and __file__.rsplit("/", 1)[-1] in msg, msg
    return msg


@pytest.mark.parametrize("family", FAMILY_OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unsupported_dtypes_are_refused_by_name(family, dtype):
    if family == "scatter":
        pytest.skip("scatter.src claims every dtype (exact data movement): test_scatter_moves_any_dtype")
    names = {"complex64": ("complex64", "complex numbers"), "float8_e4m3fn": ("float8_e4m3fn",)}[dtype]
    _expect_refusal(family, DTYPES[dtype], names)


@pytest.mark.parametrize("family", FAMILY_OPS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unsupported_layouts_are_refused_by_name(family, layout):
    names = {"sparse COO": ("sparse COO",), "sparse CSR": ("sparse CSR", "sparse COO"),
             "quantized": ("quantized", "qint8")}[layout]
    _expect_refusal(family, LAYOUTS[layout], names)


def test_scatter_moves_any_dtype():
    op, args = FAMILY_OPS["scatter"](DTYPES["complex64"])
    with repmode.enabled():
        got = op(*args)
    assert torch.equal(got, op(*args))


def test_nested_tensors_are_refused_or_computed_exactly():
    parts = [_x(4), _x(2, seed=1)]
    nested = torch.nested.nested_tensor(parts)
    with repmode.enabled():
        out = torch.exp(nested)                     # reaches repmode as the dense buffer: exact
        want = [torch.exp(p) for p in parts]
    for got, w in zip(out.unbind(), want):
        assert torch.equal(got, w)
    with repmode.enabled(), pytest.raises(UnsupportedOpError, match="nested"):
        nested + nested
    with repmode.enabled(), pytest.raises(UnsupportedOpError, match="nested"):
        torch.softmax(nested, -1)


def test_layout_refusals_run_natively_and_are_reported_without_strict():
    x = _x(3, 4).to_sparse()
    with pytest.warns(repmode.UnsupportedOpWarning), repmode.enabled(strict=False) as rm:
        y = torch.sum(x)
    assert torch.equal(y, torch.sum(x))
    assert [r.overload for r in rm.report()] == ["aten.sum.default"]


def test_tensors_on_two_devices_raise_like_torch():
    cpu, meta = _x(3, 3), torch.empty(3, 3, device="meta")
    for fn in (lambda: cpu + meta, lambda: cpu @ meta, lambda: torch.softmax(meta, 0) + cpu):
        with repmode.enabled(), pytest.raises(RuntimeError) as err:
            fn()
        assert isinstance(err.value, UnsupportedOpError)  # a RuntimeError, as torch raises
        assert "meta" in str(err.value) and "CPU kernels only" in str(err.value)
    with pytest.raises(RuntimeError):
        cpu + meta  # torch's own class for the same call


# ---- overlapping memory ------------------------------------------------------------------------

def test_in_place_op_on_an_overlapping_view_reads_before_it_writes():
    x = _x(4, 4)
    y = x.clone()
    with pytest.raises(RuntimeError, match="single memory location"):
        y.add_(y.t())                                       # torch refuses (both tensors are dense)
    y = x.clone()
    with repmode.enabled():
        y.add_(y.t())
        want = x + x.t()
    assert torch.equal(y, want)


@pytest.mark.parametrize("name, call", [
    ("add", lambda a: torch.add(a, a, out=a)),
    ("mul", lambda a: torch.mul(a, 3.0, out=a)),
    ("mm", lambda a: torch.mm(a, a, out=a)),
    ("addmm", lambda a: torch.addmm(a, a, a, out=a)),
    ("sum", lambda a: torch.sum(a, 0, keepdim=True, out=a[:1])),
    ("exp on a shifted view", lambda a: torch.exp(a[:, :3], out=a[:, 1:])),
])
def test_out_aliasing_an_input_equals_a_fresh_output(name, call):
    x = _x(4, 4)
    aliased = x.clone()
    with repmode.enabled():
        call(aliased)
        fresh_in = x.clone()
        fresh_out = call(fresh_in.clone()) if name in ("add", "mul", "mm", "addmm") else None
    if fresh_out is not None:
        assert torch.equal(aliased, fresh_out), name
    elif name == "sum":
        with repmode.enabled():
            want = x.sum(0)
        assert torch.equal(aliased[0], want) and torch.equal(aliased[1:], x[1:])
    else:
        with repmode.enabled():
            want = torch.exp(x[:, :3])
        assert torch.equal(aliased[:, 1:], want) and torch.equal(aliased[:, 0], x[:, 0])


# ---- an exception inside the mode leaves no state behind ---------------------------------------

def _state():
    return (list(_get_current_dispatch_mode_stack()), repmode.get_rng_state(), torch.get_num_threads(),
            repmode.mode.active_mode())


@pytest.mark.parametrize("raise_it", [
    lambda: torch.linalg.eigvals(torch.eye(3)),                   # refused: UnsupportedOpError
    lambda: torch.mm(_x(3, 3), _x(4, 4)),                          # torch's shape error from a kernel
    lambda: torch.exp(_x(3).to(torch.complex64)),                  # a kernel's refusal
    lambda: torch.empty(0, 3).amax(),                              # an empty reduction
    lambda: (_ for _ in ()).throw(ValueError("user code")),        # the user's own exception
])
def test_an_exception_inside_the_mode_leaves_the_state_as_it_was(raise_it):
    torch.manual_seed(3)
    seeded = repmode.get_rng_state()
    with repmode.enabled():
        torch.rand(5)                                              # the stream has moved
    before = _state()
    assert before[1] != seeded and before[3] is None
    with pytest.raises(Exception):
        with repmode.enabled():
            raise_it()
    assert _state() == before
    with pytest.raises(Exception):
        with repmode.enabled():
            with repmode.enabled(strict=True):                     # nested: the outer mode is restored
                raise_it()
    assert _state() == before
    with repmode.enabled():                                        # and the mode works afterwards
        assert torch.equal(torch.ones(2) + 1, torch.full((2,), 2.0))


# ---- every registration refuses what its tags do not claim ------------------------------------

def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if a.is_quantized:
        return b.is_quantized and a.q_scale() == b.q_scale() and torch.equal(a.int_repr(), b.int_repr())
    return a.layout == b.layout and torch.equal(a.to_dense(), b.to_dense())


@pytest.mark.parametrize("layout, convert, name", [
    ("sparse COO", lambda t: t.to_sparse(), "sparse"),
    ("quantized", lambda t: torch.quantize_per_tensor(t, 0.1, 0, torch.qint8), "quantized"),
])
def test_every_kernel_registration_refuses_other_layouts(layout, convert, name):
    """Extends tests/core/test_supported_ops_table.py's generic dtype check to layouts: every kernel or
    composite overload that runs on dense float32 inputs raises UnsupportedOpError naming the
    layout (never another error, a crash or a result) when its floating inputs are sparse COO or
    quantized."""
    from test_supported_ops_table import _generic_args

    checked, wrong = 0, []
    for reg in registrations():
        if reg.kind == "passthrough":
            continue
        for shape in ((2, 3), (3, 2)):
            args = _generic_args(reg.overload, torch.float32, shape)
            if args is None:
                break
            try:
                with repmode.enabled():
                    reg.overload(*args)
            except Exception:  # noqa: BLE001  (the generic builder got the arguments wrong)
                continue
            sparse = [convert(a) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
            try:
                with repmode.enabled():
                    got = reg.overload(*sparse)
                # only allowed where repmode ran torch's own exact kernel (integer max/min/relu, row copies)
                if not _same(got, reg.overload(*sparse)):
                    wrong.append(f"{reg.name}: ran on {layout} inputs and differs from torch")
            except UnsupportedOpError as exc:
                if name not in str(exc) and "qint8" not in str(exc):
                    wrong.append(f"{reg.name}: refused without naming the layout: {str(exc)[:120]}")
            except Exception as exc:  # noqa: BLE001
                wrong.append(f"{reg.name}: {type(exc).__name__}: {str(exc)[:120]}")
            checked += 1
            break
    assert not wrong, "\n".join(wrong)
    assert checked > 120, f"only {checked} registrations checked: the generic argument builder broke"


# ---- the audit hint names the tool that fits where the error arose --------------------------------

def _refusal_messages() -> list[str]:
    messages = []
    for op, args in ((torch.polar, (torch.ones(4), torch.ones(4))),  # unregistered
                     (torch.exp, (torch.ones(2, dtype=torch.complex64),))):  # registered, dtype refused
        with repmode.enabled(), pytest.raises(UnsupportedOpError) as err:
            op(*args)
        messages.append(str(err.value))
    return messages


def test_inside_pytest_the_hint_names_pytest_repmode_audit():
    # it suggested `python -m repmode audit your_script.py` to someone running pytest
    for msg in _refusal_messages():
        assert "pytest --repmode-audit" in msg and "your_script.py" not in msg, msg


def test_outside_pytest_the_hint_names_repmode_audit(monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    for msg in _refusal_messages():
        assert "python -m repmode audit your_script.py" in msg and "--repmode-audit" not in msg, msg
