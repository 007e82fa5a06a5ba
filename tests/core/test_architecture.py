"""The plan of the house, checked: no import cycle inside repmode, every registered overload
findable by grep next to its implementation, one family name in every layer, no hand-written
out= twins, refusals as their own kind."""
from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

import repmode
from repmode import _ext, registry
from repmode.kernels import registrations

ROOT = Path(repmode.__file__).resolve().parent
REPO = ROOT.parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _is_extension(name: str) -> bool:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None and not spec.origin.endswith(".py")


def import_graph() -> dict[str, set[str]]:
    """Module -> the repmode modules it imports, at any depth of its code (function-level imports
    count too: a lazy import is still a dependency)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # `from pkg import name`: the submodule pkg.name when there is one (a compiled
                # extension such as repmode._C is a leaf outside this graph), else pkg itself
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem
                           for a in node.names if not _is_extension(f"{stem}.{a.name}")]
            for target in targets:
                while target and target not in modules:  # `import repmode.kernels.x` names a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_repmode_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = import_graph()
    graph["repmode.registry"].add("repmode.kernels")
    assert find_cycle(graph) is not None


def test_the_registry_is_a_leaf():
    assert import_graph()["repmode.registry"] == set()


def test_tools_build_on_the_library_and_the_library_not_on_the_tools():
    graph = import_graph()
    # the package itself and `python -m repmode` are entry points: they may import the tools
    core = [m for m in graph if not m.startswith("repmode.tools") and m not in ("repmode", "repmode.__main__")]
    for module in core:
        assert not any(t.startswith("repmode.tools") for t in graph[module]), module


def test_every_registered_overload_is_named_where_it_is_registered():
    """`grep -rn aten.<op>.<overload> repmode/kernels` lands on every registration."""
    text = "\n".join(p.read_text() for p in (ROOT / "kernels").glob("*.py"))
    missing = [r.name for r in registrations() if not re.search(re.escape(r.name) + r"(?![A-Za-z0-9_])", text)]
    assert not missing, f"{len(missing)} overloads registered without their name written out: {missing[:10]}"


def test_no_hand_written_out_twins():
    """out= overloads are derived from the functional implementation (registry.out_variant)."""
    for path in (ROOT / "kernels").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                assert not node.name.endswith("_out"), f"{path.name}: {node.name} looks like a hand-written out= twin"
    for reg in registrations():
        if reg.kind in ("kernel", "composite") and any(a.is_out for a in reg.overload._schema.arguments):
            assert reg.impl.__name__.endswith("_out_variant"), f"{reg.name} is not derived by registry.out_variant"


def test_out_variant_writes_into_the_given_tensor_like_the_functional_form():
    x, y = torch.randn(5, 3), torch.randn(5, 3)
    with repmode.enabled():
        want = torch.add(x, y, alpha=2.0)
        out = torch.empty(0)
        got = torch.add(x, y, alpha=2.0, out=out)
        sums = torch.empty(1, dtype=torch.float64)
        torch.sum(x, dim=0, out=sums)
        want_sums = torch.sum(x, dim=0)
        drawn = torch.empty(4, dtype=torch.float64)
        torch.manual_seed(3)
        torch.rand(4, out=drawn)
        torch.manual_seed(3)
        direct = torch.rand(4, dtype=torch.float64)
    assert got is out and torch.equal(out, want)
    assert sums.dtype == torch.float64 and torch.equal(sums, want_sums.double())
    assert torch.equal(drawn, direct)  # a factory draws in the out tensor's dtype


def test_functional_of_pairs_each_out_overload_with_its_functional_form():
    aten = torch.ops.aten
    assert registry.functional_of(aten.sum.IntList_out) is aten.sum.dim_IntList
    assert registry.functional_of(aten.normal.float_float_out) is aten.normal.float_float
    assert registry.functional_of(aten.max_pool2d_with_indices.out) is aten.max_pool2d_with_indices.default
    # overloads whose argument names agree but whose types differ: the types decide
    assert registry.functional_of(aten.pow.Scalar_out) is aten.pow.Scalar
    assert registry.functional_of(aten.pow.Tensor_Scalar_out) is aten.pow.Tensor_Scalar
    assert registry.functional_of(aten.bernoulli.Tensor_out) is aten.bernoulli.Tensor
    assert registry.functional_of(aten.bernoulli.float_out) is aten.bernoulli.p
    assert registry.functional_of(aten.normal.Tensor_Tensor_out) is aten.normal.Tensor_Tensor
    assert registry.functional_of(aten.normal.float_Tensor_out) is aten.normal.float_Tensor
    assert registry.functional_of(aten.clamp.Tensor_out) is aten.clamp.Tensor
    assert registry.functional_of(aten.lerp.Tensor_out) is aten.lerp.Tensor


def test_out_forms_whose_overloads_share_argument_names_compute_their_own_op():
    p, mean, std = torch.rand(64, dtype=torch.float64), torch.randn(64), torch.rand(64) + 0.5
    e = torch.arange(5)
    with repmode.enabled():
        torch.manual_seed(1)
        want_b = torch.bernoulli(p)
        torch.manual_seed(1)
        got_b = torch.empty(64, dtype=torch.float64)
        torch.bernoulli(p, out=got_b)
        torch.manual_seed(2)
        want_n = torch.normal(mean, std)
        torch.manual_seed(2)
        got_n = torch.empty(64)
        torch.normal(mean, std, out=got_n)
        want_p = torch.pow(2, e)
        got_p = torch.empty(5, dtype=torch.int64)
        torch.pow(2, e, out=got_p)
    assert torch.equal(got_b, want_b) and torch.equal(got_n, want_n) and torch.equal(got_p, want_p)


def test_refusals_are_their_own_kind_and_raise_their_reason():
    refusals = [r for r in registrations() if r.kind == "refusal"]
    assert refusals and all(r.reason for r in refusals)
    with pytest.raises(repmode.UnsupportedOpError, match="non-symmetric"), repmode.enabled():
        torch.linalg.eigvals(torch.randn(3, 3))
    with pytest.warns(repmode.UnsupportedOpWarning), repmode.enabled(strict=False) as rm:
        torch.linalg.eigvals(torch.randn(3, 3))
    assert [r.overload for r in rm.report()] == ["aten.linalg_eig.default"]


def test_the_schema_adapter_reads_arguments_by_name():
    from repmode.kernels._common import arguments, param

    aten = torch.ops.aten
    x = torch.randn(2)
    assert param(aten.sum.dim_IntList, (x, [0]), {}, "keepdim") is False
    assert param(aten.sum.dim_IntList, (x, [0]), {"dtype": torch.float64}, "dtype") is torch.float64
    assert param(aten.sum.dim_IntList, (x, [0], True), {}, "keepdim") is True
    assert arguments(aten.leaky_relu.default, (x,), {}) == [x, 0.01]


# ---- one family, one name, in every layer ----------------------------------------------------

def _entry_families(module) -> set[str]:
    return {family for family, _ in module.entry_points()}


def _cuda_families(table: str) -> set[str]:
    """Families with rows the CUDA module binds (both-device and CUDA-only rows of the table)."""
    rows = re.findall(r"^REPMODE_(ENTRY|ENTRY_SIZED|CUDA_ENTRY|CUDA_CONTROL)\s*\(\s*(\w+)\s*,", table, re.M)
    return {family for _, family in rows}


def test_every_family_with_compiled_code_has_one_name_in_every_layer():
    """The family names come from the registry; the binding table says which have C++ (and CUDA) code."""
    registered = {r.family for r in registrations()}
    table = (REPO / "csrc" / "bindings" / "entry_points.def").read_text()
    bound = _entry_families(_ext.C) - {"runtime"}
    assert bound, "repmode._C exports no entry points"
    assert bound <= registered, f"binding table families without a repmode/kernels module: {bound - registered}"
    for family in sorted(bound):
        for layer in (ROOT / "kernels" / f"{family}.py", REPO / "csrc" / "common" / f"{family}.h",
                      REPO / "csrc" / "cpu" / f"{family}.cpp"):
            assert layer.exists(), f"family {family}: {layer.relative_to(REPO)} is missing"
    cuda = _cuda_families(table) - {"runtime"}
    assert cuda, "the binding table has no CUDA rows"
    for family in sorted(cuda):
        assert (REPO / "csrc" / "cuda" / f"{family}.cu").exists(), f"family {family}: csrc/cuda/{family}.cu is missing"
    assert len(bound) >= 10, sorted(bound)


def test_every_kernel_module_calls_only_entry_points_of_its_own_family():
    """A family's Python module reaches C++ only through entries the table files under its name."""
    owner = {name: family for family, name in _ext.C.entry_points()}
    call = re.compile(r"(?:\bC|kernels_for\([^)]*\)|\bkernels)\.([a-z_0-9]+)\(")
    for path in (ROOT / "kernels").glob("*.py"):
        for name in call.findall(path.read_text()):
            if name in owner and owner[name] not in ("runtime", "cpu"):
                assert owner[name] == path.stem, f"{path.name} calls {name}, an entry of family {owner[name]}"


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump to read the built extension")
def test_the_compiler_formed_no_fused_complex_products():
    """-ffp-contract=off keeps every fma explicit, but GCC 12's vectorizer can still turn a scalar
    complex product (a·c − b·d, a·d + b·c) into vfmaddsub/vfmsubadd under an FMA target (seen in the
    FFT's AVX-512 code): that fuses two roundings into one and changes bits per ISA. No repmode
    source asks for these instructions, so none may appear in the extension."""
    so = Path(_ext.C.__file__)
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so)], capture_output=True, text=True,
                             check=True).stdout
    fused = re.findall(r"\bvfm(?:addsub|subadd)\w*", listing)
    assert not fused, f"{len(fused)} fused complex products ({sorted(set(fused))}) in {so.name}"
