"""docs/supported_ops.md: up to date with the registry, complete, and its dtype and device claims
true (checked by calling the ops)."""
from __future__ import annotations

import re
import warnings

import pytest
import torch

import repmode
from repmode.kernels import registrations
from repmode.registry import DTYPE_TAGS
from repmode.tools import ops_table

aten = torch.ops.aten
TABLE = ops_table.REPO / "docs" / "supported_ops.md"


def table_rows(text: str) -> dict[str, tuple[str, str, str]]:
    """``{overload: (kind, dtypes, devices)}`` from the rendered markdown."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| `([^`]+)` \| (\w+) \| ([^|]+) \| (\w+) \|", line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} listed twice"
            rows[m.group(1)] = (m.group(2), m.group(3).strip(), m.group(4))
    return rows


@pytest.fixture(scope="module")
def rendered() -> str:
    return ops_table.render_markdown()


@pytest.fixture(scope="module")
def rows(rendered) -> dict[str, tuple[str, str, str]]:
    return table_rows(rendered)


# ---- the committed file and its completeness ---------------------------------------------------

def test_committed_table_is_up_to_date(rendered):
    committed = TABLE.read_text(encoding="utf-8") if TABLE.exists() else ""
    made_with = re.search(r"under torch (\d+\.\d+)", committed)
    if made_with and made_with.group(1) != ops_table.torch_minor():
        pytest.skip(f"docs/supported_ops.md lists torch {made_with.group(1)}'s overloads; this is torch "
                    f"{ops_table.torch_minor()}")
    assert committed == rendered, f"docs/supported_ops.md is out of date: regenerate it with `{ops_table.REGENERATE}`"


def test_rendering_is_deterministic(rendered):
    assert ops_table.render_markdown() == rendered


def test_every_registered_overload_has_one_row(rows):
    regs = registrations()
    assert set(rows) == {r.name for r in regs}
    assert len(rows) == len(regs)
    for reg in regs:
        kind, dtypes, devices = rows[reg.name]
        assert kind == reg.kind
        assert devices == {"passthrough": "any", "refusal": "none"}.get(reg.kind, "cpu")
        assert dtypes == ops_table.dtypes_text(reg)


def test_every_registration_declares_known_dtype_tags():
    for reg in registrations():
        assert reg.dtypes is not None, f"{reg.name} declares no dtypes"
        assert set(reg.dtypes) <= set(DTYPE_TAGS), reg.name
    assert all(r.dtypes == ("any",) for r in registrations() if r.kind == "passthrough")


def test_every_family_maps_to_a_semantics_section_with_a_summary():
    summaries = ops_table.semantics_summaries()
    families = {r.family for r in registrations()}
    for reg in registrations():
        if reg.kind != "passthrough":
            assert ops_table.section_of(reg) in summaries, reg.name
    for family in families - {"passthrough"}:
        assert family in ops_table.SECTIONS
    # every op section of semantics.md opens with its summary (a new section must get one)
    text = ops_table.SEMANTICS.read_text(encoding="utf-8")
    titles = [line[3:].strip() for line in text.splitlines() if line.startswith("## ")]
    assert set(titles) - {"Ground rules"} == set(summaries)
    assert all(len(s) > 30 and "\n" not in s for s in summaries.values())


def test_rows_carry_their_sections_summary_or_passthrough_reason(rendered):
    summaries = ops_table.semantics_summaries()
    by_name = {line.split("`")[1]: line for line in rendered.splitlines() if line.startswith("| `")}
    assert by_name["aten.mm.default"].endswith(f"| {summaries['Matrix products']} |")
    assert by_name["aten._log_softmax.default"].endswith(f"| {summaries['log_softmax']} |")
    assert by_name["aten._softmax.default"].endswith(f"| {summaries['softmax']} |")
    assert by_name["aten.sum.default"].endswith(f"| {summaries['Sum order']} |")
    assert by_name["aten.var.correction"].endswith(f"| {summaries['Reductions']} |")
    assert by_name["aten.view.default"].endswith(f"| {repmode.registry.REGISTRY[aten.view.default].reason} |")


# ---- failing loudly --------------------------------------------------------------------------

def test_a_family_without_a_section_fails_loudly(monkeypatch):
    sections = dict(ops_table.SECTIONS)
    del sections["matmul"]
    monkeypatch.setattr(ops_table, "SECTIONS", sections)
    with pytest.raises(ops_table.TableError, match="family 'matmul'"):
        ops_table.render_markdown()


def test_a_section_without_its_summary_line_fails_loudly(tmp_path):
    text = ops_table.SEMANTICS.read_text(encoding="utf-8")
    start = text.index("## Matrix products\n\nOrder in one line:")
    end = text.index("\n\n", start + len("## Matrix products\n\n"))
    broken = tmp_path / "semantics.md"
    broken.write_text(text[:start] + "## Matrix products" + text[end:], encoding="utf-8")
    with pytest.raises(ops_table.TableError, match="Matrix products"):
        ops_table.render_markdown(broken)


def test_check_and_write(tmp_path, capsys):
    path = tmp_path / "supported_ops.md"
    assert ops_table.main(["--check", str(path)]) == 1
    assert "python -m repmode ops --write" in capsys.readouterr().err
    assert ops_table.main(["--write", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == ops_table.render_markdown()
    assert ops_table.main(["--check", str(path)]) == 0
    path.write_text(path.read_text(encoding="utf-8").replace("| kernel |", "| composite |", 1), encoding="utf-8")
    assert ops_table.main(["--check", str(path)]) == 1
    assert "out of date" in capsys.readouterr().err


# ---- the dtype claims are true ---------------------------------------------------------------

def _run(op, *args, strict=True, **kwargs):
    with repmode.enabled(strict=strict):
        return op(*args, **kwargs)


def _refused(op, *args, **kwargs) -> bool:
    """True when strict mode raises UnsupportedOpError; non-strict mode then runs the op natively
    and reports it (and reports nothing when strict mode accepts the inputs)."""
    try:
        _run(op, *args, strict=True, **kwargs)
        refused = False
    except repmode.UnsupportedOpError:
        refused = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", repmode.UnsupportedOpWarning)
        with repmode.enabled(strict=False) as rm:
            try:
                op(*args, **kwargs)
            except repmode.UnsupportedOpError:
                raise
            except Exception:  # torch's own kernel may refuse the dtype too: it was still reported
                pass
    assert bool(rm.report()) == refused, f"{op}: non-strict report {rm.report_text()} (strict refused: {refused})"
    return refused


def _x(dtype, *shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    return (x * 5).to(dtype) if not dtype.is_floating_point else x.to(dtype)


@pytest.mark.parametrize("op, args", [
    (aten.sum.default, lambda d: (_x(d, 300),)),
    (aten._softmax.default, lambda d: (_x(d, 4, 33), -1, False)),
    (aten.gelu.default, lambda d: (_x(d, 50),)),
    (aten.var.correction, lambda d: (_x(d, 7, 9), [1])),
])
@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16])
def test_widened_ops_compute_in_float32_and_round_once(rows, op, args, low):
    assert "bf16/f16 widened" in rows[str(op)][1]
    x_low = args(low)
    wide = tuple(a.to(torch.float32) if isinstance(a, torch.Tensor) else a for a in x_low)
    got = _run(op, *x_low)
    expected = _run(op, *wide).to(low)
    assert got.dtype == low
    assert torch.equal(got.view(torch.int16), expected.view(torch.int16))


@pytest.mark.parametrize("op, args", [
    (aten.mm.default, lambda d: (_x(d, 3, 4), _x(d, 4, 2, seed=1))),
    (aten.bmm.default, lambda d: (_x(d, 2, 3, 4), _x(d, 2, 4, 2, seed=1))),
    (aten.native_layer_norm.default, lambda d: (_x(d, 3, 8), [8], None, None, 1e-5)),
    (aten.convolution.default, lambda d: (_x(d, 1, 2, 5, 5), _x(d, 3, 2, 3, 3, seed=1), None, [1, 1], [0, 0],
                                          [1, 1], False, [0, 0], 1)),
    (aten.mean.default, lambda d: (_x(d, 10),)),
    (aten.gelu.default, lambda d: (_x(d, 10),)),
    (aten.sum.IntList_out, lambda d: (_x(d, 10), [0])),
    (aten.remainder.Tensor, lambda d: (_x(d, 10), _x(d, 10, seed=1).abs() + 1)),
    (aten.linalg_qr.default, lambda d: (_x(d, 3, 3),)),
])
@pytest.mark.parametrize("dtype, tags", [
    (torch.float32, {"f32"}), (torch.float64, {"f64"}), (torch.bfloat16, {"bf16/f16 widened", "bf16/f16"}),
    (torch.int64, {"int"}),
])
def test_claimed_dtypes_run_and_unclaimed_ones_are_refused(rows, op, args, dtype, tags):
    kwargs = {"out": torch.empty(0, dtype=dtype)} if op is aten.sum.IntList_out else {}
    claimed = set(rows[str(op)][1].split(", ")) & tags
    if claimed:
        _run(op, *args(dtype), **kwargs)
    else:
        assert _refused(op, *args(dtype), **kwargs), f"{op} runs on {dtype}, which the table does not claim"


def test_table_distinguishes_overloads_of_one_op(rows):
    # sum.dim_IntList widens bf16, and so does its out= form (derived from it); signbit is a
    # passthrough (any dtype); nextafter covers no integers; a refusal accepts nothing
    assert "bf16/f16 widened" in rows["aten.sum.dim_IntList"][1]
    assert rows["aten.sum.IntList_out"][1] == rows["aten.sum.dim_IntList"][1]
    assert rows["aten.signbit.default"][1] == "any"
    assert rows["aten.nextafter.default"][1] == "f32, f64, bf16/f16 widened"
    assert rows["aten.linalg_eig.default"][1] == "none (refused)"


def test_half_ops_accumulate_in_the_own_dtype(rows):
    assert rows["aten.scatter_add.default"][1] == "f32, f64, bf16/f16, int"
    self = torch.zeros(3, dtype=torch.bfloat16)
    index = torch.tensor([0, 0, 2, 0])
    src = torch.tensor([1.0, 2.0**-8, 3.0, 2.0**-8], dtype=torch.bfloat16)
    out = _run(aten.scatter_add.default, self, 0, index, src)
    # bf16 additions in source order: 1 + 2^-8 rounds to 1 (ties to even) twice
    assert out.dtype == torch.bfloat16 and out.tolist() == [1.0, 0.0, 3.0]


def test_foreach_ops_claim_their_single_tensor_ops_dtypes(rows):
    assert rows["aten._foreach_add.List"][1] == rows["aten.add.Tensor"][1]
    assert rows["aten.mm.default"][1] == "f32, f64, bf16/f16 widened"
    if "aten._foreach_mm.default" in rows:  # an overload that older torch versions lack
        assert rows["aten._foreach_mm.default"][1] == rows["aten.mm.default"][1]
    assert rows["aten._foreach_norm.Scalar"][1] == rows["aten.linalg_vector_norm.default"][1]


# A broad check: call every registered overload whose arguments can be built generically, on
# each probe dtype, and compare what happens with its claim. Only conclusive outcomes count: the
# op ran, or it raised UnsupportedOpError about the dtype while another dtype ran.
_PROBES = {torch.float32: {"float32", "any"}, torch.float64: {"float64", "any"},
           torch.bfloat16: {"widened", "half", "any"}, torch.float16: {"widened", "half", "any"},
           torch.int64: {"integer", "any"}}


def _generic_args(op, dtype, shape):
    args, tensors = [], 0
    for a in op._schema.arguments:
        if a.kwarg_only or a.has_default_value():
            continue
        kind = str(a.type)
        if kind == "Tensor":
            tensors += 1
            if a.name in ("index", "indices", "target"):
                args.append(torch.zeros(shape, dtype=torch.int64))
            else:
                x = torch.arange(6, dtype=torch.float64).reshape(shape) / 7 + 0.25
                args.append(x.to(dtype) if dtype.is_floating_point else (x * 7).to(dtype))
        elif kind == "Scalar":
            args.append(2)
        elif kind == "int":
            args.append(-1 if a.name == "dim" else 1)
        elif kind == "bool":
            args.append(False)
        elif kind == "float":
            args.append(0.5)
        elif kind.startswith("int["):
            args.append([-1] if "dim" in a.name else [1])
        else:
            return None
    return args if tensors else None


def _outcome(op, dtype):
    for shape in ((2, 3), (3, 2)):
        args = _generic_args(op, dtype, shape)
        if args is None:
            return None
        try:
            _run(op, *args)
            return "ran"
        except repmode.UnsupportedOpError as exc:
            why = str(exc).split("): ", 1)[-1]
            if re.search(r"dtype|floating-point tensors|complex", why):
                return "refused"
        except Exception:  # noqa: BLE001  (shapes or arguments the generic builder got wrong)
            pass
    return None


def test_generic_calls_agree_with_every_conclusive_dtype_claim():
    checked, wrong = 0, []
    for reg in registrations():
        outcomes = {dtype: _outcome(reg.overload, dtype) for dtype in _PROBES}
        if "ran" not in outcomes.values():
            continue
        for dtype, outcome in outcomes.items():
            if outcome is None:
                continue
            checked += 1
            claimed = bool(_PROBES[dtype] & set(reg.dtypes))
            if claimed != (outcome == "ran"):
                wrong.append(f"{reg.name} on {dtype}: {outcome}, claimed {reg.dtypes}")
    assert not wrong, "\n".join(wrong)
    assert checked > 500, f"only {checked} conclusive calls: the generic argument builder broke"


# ---- the device claims -------------------------------------------------------------------------

@pytest.mark.parametrize("op, args", [
    (aten.exp.default, lambda: (torch.empty(4, device="meta"),)),
    (aten.mm.default, lambda: (torch.empty(2, 3, device="meta"), torch.empty(3, 2, device="meta"))),
    (aten.sum.default, lambda: (torch.empty(5, device="meta"),)),
    (aten._softmax.default, lambda: (torch.empty(2, 5, device="meta"), -1, False)),
    (aten.mse_loss.default, lambda: (torch.empty(5, device="meta"), torch.empty(5, device="meta"))),
])
def test_cpu_only_ops_refuse_other_devices(rows, op, args):
    assert rows[str(op)][2] == "cpu"
    assert _refused(op, *args())


def test_passthroughs_run_on_other_devices(rows):
    assert rows["aten.view.default"][2] == "any"
    out = _run(aten.view.default, torch.empty(6, device="meta"), [2, 3])
    assert out.device.type == "meta" and out.shape == (2, 3)


# ---- the command: print by default, write only when asked ---------------------------------------

def test_ops_without_arguments_prints_the_table_and_writes_nothing(tmp_path, monkeypatch, capsys, rendered):
    # it wrote a 155 KB docs/supported_ops.md into the current directory before
    from repmode.tools import cli

    monkeypatch.chdir(tmp_path)
    assert cli.main(["ops"]) == 0
    assert capsys.readouterr().out == rendered
    assert list(tmp_path.iterdir()) == []


def test_ops_name_prints_that_ops_rows(capsys):
    assert ops_table.main(["mm"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| overload | family |")
    assert [line.split(" | ")[0] for line in out[2:]] == ["| `aten.mm.default`", "| `aten.mm.out`"]
    assert all(" | matmul | kernel | " in line for line in out[2:])
    assert ops_table.main(["aten.addmm.default", "torch.ops.aten.relu"]) == 0
    names = [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines()[2:]]
    assert names[0] == "| `aten.addmm.default`" and all("aten.relu." in n for n in names[1:]) and len(names) > 1


def test_ops_name_not_registered_says_so(capsys):
    assert ops_table.main(["mmm"]) == 1
    err = capsys.readouterr().err
    assert "mmm: no registered overload" in err and "close: mm" in err


def test_write_with_the_default_path(tmp_path, monkeypatch, rendered):
    monkeypatch.chdir(tmp_path)
    assert ops_table.main(["--write"]) == 0
    assert (tmp_path / ops_table.DEFAULT_PATH).read_text(encoding="utf-8") == rendered
    assert ops_table.main(["--check"]) == 0
    assert ops_table.main(["--write", str(tmp_path / "file" / "under" / "a-file")]) == 0  # makes folders
    assert ops_table.main(["--write", str(tmp_path / "file" / "under" / "a-file" / "x.md")]) == 2  # not a folder
