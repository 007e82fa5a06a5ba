"""The dispatch mode and the registry: strictness, reports, decomposition, environment checks."""
from __future__ import annotations

import warnings

import pytest
import torch

import repmode
from repmode.registry import REGISTRY


def test_strict_mode_names_the_unsupported_overload():
    x = torch.randn(8)
    with pytest.raises(repmode.UnsupportedOpError) as info:
        with repmode.enabled():
            torch.polar(x, x)
    message = str(info.value)
    assert "aten.polar.default" in message
    assert "float32[8] cpu" in message
    assert "strict=False" in message
    assert "test_mode.py" in message  # the user's call site
    assert isinstance(info.value, RuntimeError)


def test_non_strict_runs_natively_and_reports_call_site():
    x = torch.randn(8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with repmode.enabled(strict=False) as rm:
            expected = torch.polar(x, x)  # line A
            torch.polar(x, x)
    assert torch.equal(expected, torch.polar(x, x))
    report = rm.report()
    assert [r.overload for r in report] == ["aten.polar.default"]
    assert report[0].count == 2
    filename, line = report[0].first_call_site.rsplit(":", 1)
    assert filename.endswith("test_mode.py")
    import inspect
    source = inspect.getsource(test_non_strict_runs_natively_and_reports_call_site)
    first_line = inspect.getsourcelines(test_non_strict_runs_natively_and_reports_call_site)[1]
    line_a = first_line + next(i for i, l in enumerate(source.splitlines()) if "# line A" in l)
    assert int(line) == line_a
    assert sum(issubclass(w.category, repmode.UnsupportedOpWarning) for w in caught) == 1  # once per overload
    assert "aten.polar.default" in rm.report_text()


_probe = torch.library.Library("repmode_probe", "DEF")  # a package's custom ops, as torchaudio's
_probe.define("version() -> int")
_probe.impl("version", lambda: 7, "CompositeExplicitAutograd")
_probe.define("twice(Tensor x) -> Tensor")
_probe.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")


def test_an_op_without_tensors_runs_natively_and_one_with_tensors_is_refused():
    # A package imported inside the block (transformers' lazy imports load torchaudio, which asks
    # its op for the CUDA version) must not stop strict mode: the query computes no tensor.
    with repmode.enabled(strict=True) as mode:
        assert torch.ops.repmode_probe.version() == 7
        with pytest.raises(repmode.UnsupportedOpError, match="repmode_probe.twice.default"):
            torch.ops.repmode_probe.twice(torch.ones(2))
    assert mode.report() == []


def test_supported_op_does_not_appear_in_report():
    with repmode.enabled(strict=False) as rm:
        a = torch.ones(4, 3)
        ((a + a) @ a.t()).sum()
    assert rm.report() == []


def test_composite_ops_are_decomposed_under_inference_mode():
    torch.manual_seed(0)
    layer = torch.nn.Linear(5, 3)
    x = torch.randn(4, 5)
    with repmode.enabled():
        expected = layer(x)
    with torch.inference_mode(), repmode.enabled():
        got = layer(x)  # aten.linear arrives un-decomposed here
    assert torch.equal(expected, got)
    assert torch.ops.aten.linear.default not in REGISTRY


def test_decorator_form():
    @repmode.enabled()
    def f(a):
        return (a * 2).sum()

    assert f(torch.arange(4.0)).item() == 12.0


def test_profiler_markers_pass():
    with repmode.enabled():
        with torch.profiler.record_function("region"):
            y = torch.ones(3) + 1
    assert torch.equal(y, torch.full((3,), 2.0))


def test_refuses_to_run_when_denormals_are_flushed():
    torch.set_flush_denormal(True)
    try:
        with pytest.raises(repmode.ReproducibilityEnvironmentError, match="flush"):
            with repmode.enabled():
                pass
    finally:
        torch.set_flush_denormal(False)
    with repmode.enabled():
        pass


def test_registry_kinds_and_reasons():
    ops = dict(repmode.supported_ops())
    assert ops["aten.mm.default"] == "kernel"
    assert ops["aten.view.default"] == "passthrough"
    for reg in repmode.registrations():
        assert reg.kind in ("kernel", "passthrough", "composite", "refusal")
        if reg.kind in ("passthrough", "refusal"):
            assert reg.reason.strip(), reg.name


def test_no_inexact_op_is_passed_through():
    # Ops that accumulate, use several roundings or call libm must never be native.
    forbidden = ["add", "sub", "mul", "div", "addmm", "mm", "bmm", "sum", "mean", "exp", "log", "lerp",
                 "addcmul", "addcdiv", "_log_softmax", "nll_loss_forward", "cumsum", "softmax"]
    for reg in repmode.registrations():
        if reg.kind == "passthrough":
            base = reg.name.split(".")[1].rstrip("_")
            assert base not in forbidden, reg.name


def test_registering_twice_is_an_error():
    from repmode import kernels
    from repmode.registry import register_passthrough
    kernels.load()  # the families register on first use: aten.view must be there already
    with pytest.raises(ValueError, match="registered twice"):
        register_passthrough(torch.ops.aten.view.default, reason="duplicate")


def test_passthrough_needs_a_reason():
    from repmode.registry import register_passthrough
    with pytest.raises(ValueError, match="reason"):
        register_passthrough(torch.ops.aten.cumsum.default, reason=" ")


def test_backward_inside_the_block_is_covered():
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(2, 4)
    with repmode.enabled(strict=False) as rm:
        (x @ w).relu().sum().backward()
    assert rm.report() == []
    assert w.grad is not None


def test_backward_of_views_and_triangles_is_exact_data_movement():
    # select/slice/diagonal backward and tril/triu put each gradient element in one place of a
    # zero tensor: strict mode runs them natively and the bits equal native torch's.
    torch.manual_seed(0)
    x = torch.randn(5, 6, 7)

    def grads():
        leaf = x.clone().requires_grad_()
        y = leaf[:, -1].sum() + leaf[1:4, ::2].square().sum() + leaf.diagonal(dim1=1, dim2=2).exp().sum()
        y = y + leaf[0].tril(1).sum() + leaf[0].triu().abs().sum()
        y.backward()
        return leaf.grad

    with repmode.enabled():
        got = grads()
    torch.testing.assert_close(got, grads(), rtol=1e-6, atol=1e-6)
    with repmode.enabled():
        assert torch.equal(got, grads())


def test_nested_blocks_share_one_mode_with_the_inner_blocks_strictness():
    x = torch.randn(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", repmode.UnsupportedOpWarning)
        _nested_blocks(x)


def _nested_blocks(x):
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    with repmode.enabled(strict=False) as outer:
        torch.polar(x, x)
        with repmode.enabled() as inner:
            assert len(_get_current_dispatch_mode_stack()) == 1  # no second mode
            with pytest.raises(repmode.UnsupportedOpError):
                torch.polar(x, x)
        torch.polar(x, x)  # non-strict again after the strict block
    assert inner.report() == []
    assert [(r.overload, r.count) for r in outer.report()] == [("aten.polar.default", 2)]
    assert _get_current_dispatch_mode_stack() == []


def test_recursive_decorated_function_enters_and_leaves_cleanly():
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    @repmode.enabled()
    def depth(n):
        return torch.ones(2).sum() if n == 0 else depth(n - 1) + 1

    assert depth(3).item() == 5.0
    assert _get_current_dispatch_mode_stack() == []


def test_report_lists_dtypes_and_devices():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with repmode.enabled(strict=False) as rm:
            torch.polar(torch.randn(4), torch.randn(4))
            torch.polar(torch.randn(4, dtype=torch.float64), torch.randn(4, dtype=torch.float64))
    (record,) = rm.report()
    assert record.dtypes == {"float32", "float64"} and record.devices == {"cpu"}
    text = rm.report_text()
    assert "float32,float64" in text and "aten.polar.default" in text and "test_mode.py" in text


def test_torch_compile_inside_the_mode_warns_that_it_runs_eagerly(caplog):
    import logging
    logger = logging.getLogger("torch._dynamo.convert_frame")
    level_before = logger.level

    @torch.compile
    def affine(x):
        return torch.sin(x) * 2 + 1

    x = torch.randn(8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with repmode.enabled():
            compiled = affine(x)  # the call site
            again = affine(x)
            eager = torch.sin(x) * 2 + 1
    notices = [w for w in caught if issubclass(w.category, repmode.CompiledRegionWarning)]
    assert len(notices) == 1  # once per block
    assert "'affine' runs eagerly" in str(notices[0].message)
    assert notices[0].filename == __file__
    import inspect
    src, first = inspect.getsourcelines(test_torch_compile_inside_the_mode_warns_that_it_runs_eagerly)
    assert notices[0].lineno == first + next(i for i, l in enumerate(src) if "# the call site" in l)
    assert torch.equal(compiled, eager) and torch.equal(again, eager)  # eager, through repmode
    assert logger.level == level_before
    assert not [r for r in caplog.records if r.name == logger.name and r.levelno < logging.WARNING]


class _Scale(torch.nn.Module):
    def forward(self, x):
        return x * 3


@pytest.mark.parametrize("make", [lambda: torch.compile(torch.nn.Linear(4, 2)), lambda: torch.compile(_Scale())],
                         ids=["torch.compile(Linear)", "torch.compile(user module)"])
def test_the_compile_warning_names_the_users_module(make):
    # it named torch's internal wrapper ('inner') for a compiled module
    model = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with repmode.enabled():
            model(torch.randn(3, 4))
    notices = [str(w.message) for w in caught if issubclass(w.category, repmode.CompiledRegionWarning)]
    assert len(notices) == 1, notices
    name = "Linear" if "Linear" in repr(model) else "_Scale"
    assert f"torch.compile'd module '{name}' runs eagerly" in notices[0], notices[0]
    assert "'inner'" not in notices[0] and "'_call_impl'" not in notices[0]


def test_tensors_on_other_devices_get_an_actionable_error():
    a = torch.empty(4, 4, device="meta")  # stands in for a CUDA tensor on a CPU-only machine
    with pytest.raises(repmode.UnsupportedOpError) as info:
        with repmode.enabled():
            torch.mm(a, a)
    message = str(info.value)
    assert "CPU kernels only" in message and ".cpu()" in message and "pytest --repmode-audit" in message


def test_non_strict_runs_refused_inputs_natively_and_reports_them():
    c = torch.ones(2, 2, dtype=torch.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", repmode.UnsupportedOpWarning)
        with repmode.enabled(strict=False) as rm:
            got = c @ c
    assert torch.equal(got, c @ c)
    (record,) = rm.report()
    assert record.overload == "aten.mm.default" and record.dtypes == {"complex64"}
