"""repmode.trace / diff / replay: per-op digests of a run, the first op where two runs part ways,
and rerunning one recorded op."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest
import torch

import repmode
from repmode.tools.divergence import diff_traces, replay
from repmode.tools.trace import Tracer, read_trace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def conv_step(threads: int = 1):
    """A small training step whose backward has a convolution weight gradient and a large sum."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(0)  # the module's initialisation (then overwritten) draws from the stream
        g = torch.Generator().manual_seed(0)
        conv = torch.nn.Conv2d(3, 8, 3)
        with torch.no_grad():
            conv.weight.copy_(torch.randn(conv.weight.shape, generator=g) / 5)
            conv.bias.copy_(torch.randn(8, generator=g))
        x = torch.randn(64, 3, 32, 32, generator=g)
        out = torch.relu(conv(x))
        loss = out.square().sum()  # the loss line
        loss.backward()
        return loss.detach(), conv.weight.grad
    finally:
        torch.set_num_threads(before)


def test_two_traces_of_the_same_repmode_run_are_identical(tmp_path):
    with repmode.trace(tmp_path / "a.trace"):
        conv_step(1)
    with repmode.trace(tmp_path / "b.trace.gz"):  # compressed, and another thread count
        conv_step(2)
    result = diff_traces(tmp_path / "a.trace", tmp_path / "b.trace.gz")
    assert result.kind == "identical" and result.seq == 0, result.text
    _, records = read_trace(tmp_path / "a.trace")
    assert result.matched == len(records) > 20
    assert {r["phase"] for r in records} == {"forward", "backward"}
    assert any(r["op"] == "aten.convolution_backward.default" and r["node"] == "ConvolutionBackward0"
               for r in records)


def test_tracing_does_not_change_results(tmp_path):
    with repmode.enabled():
        plain = conv_step()
    with repmode.trace(tmp_path / "t.trace"):
        traced = conv_step()
    for a, b in zip(plain, traced):
        assert torch.equal(a.view(torch.int32), b.view(torch.int32))


def test_native_runs_at_1_and_2_threads_part_at_the_weight_gradient(tmp_path):
    with repmode.trace(tmp_path / "n1.trace", native=True):
        conv_step(1)
    with repmode.trace(tmp_path / "n2.trace", native=True):
        conv_step(2)
    result = diff_traces(tmp_path / "n1.trace", tmp_path / "n2.trace")
    assert result.kind == "output", result.text
    _, records = read_trace(tmp_path / "n1.trace")
    first = records[result.seq - 1]
    assert first["op"] in ("aten.convolution_backward.default", "aten.sum.default"), result.text
    assert first["op"] in result.text and first["site"] in result.text
    line = _line_of("# the loss line") if first["op"] == "aten.sum.default" else _line_of("loss.backward()")
    assert first["site"].endswith(f"test_trace.py:{line}")
    assert all(r["op"] == s["op"] and r["out"] == s["out"] for r, s in zip(records[:result.seq - 1],
                                                                            read_trace(tmp_path / "n2.trace")[1]))


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "_line_of" not in line)


@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
def test_a_perturbed_op_is_found_at_exactly_its_position(tmp_path, monkeypatch, where):
    with repmode.trace(tmp_path / "clean.trace"):
        conv_step()
    # ops whose first output is a tensor with values (not an uninitialised allocation)
    candidates = [r["seq"] for r in read_trace(tmp_path / "clean.trace")[1]
                  if "digest" in r["out"][0] and r["out"][0]["shape"] != [0]]
    k = candidates[round(where * (len(candidates) - 1))]
    count = [0]
    original_run = Tracer.run

    def run_with_a_faulty_kernel(self, func, args, kwargs, impl):
        def faulty(func, args, kwargs):  # the op's kernel, flipping one bit of its output at op #k
            out = impl(func, args, kwargs)
            count[0] += 1
            if count[0] == k:
                first = out[0] if isinstance(out, (tuple, list)) else out
                bits = first.view(torch.int32) if first.dtype == torch.float32 else first.view(torch.uint8)
                bits.view(-1)[0] ^= 1
            return out
        return original_run(self, func, args, kwargs, faulty)

    monkeypatch.setattr(Tracer, "run", run_with_a_faulty_kernel)
    with repmode.trace(tmp_path / "perturbed.trace"):
        conv_step()
    monkeypatch.undo()
    result = diff_traces(tmp_path / "clean.trace", tmp_path / "perturbed.trace")
    assert result.seq == k and result.matched == k - 1, result.text
    assert f"first difference at #{k} " in result.text


def test_different_op_sequences_are_reported_as_such(tmp_path):
    x = torch.randn(4, 4)
    with repmode.trace(tmp_path / "a.trace"):
        (x + 1).exp()
    with repmode.trace(tmp_path / "b.trace"):
        (x + 1).log()
    result = diff_traces(tmp_path / "a.trace", tmp_path / "b.trace")
    assert result.kind == "op" and result.seq == 2 and "op sequences differ at #2" in result.text
    with repmode.trace(tmp_path / "c.trace"):
        (x + 1).exp().sum()
    assert diff_traces(tmp_path / "a.trace", tmp_path / "c.trace").kind == "length"


def test_kept_values_give_value_differences_and_replay_reproduces_the_op(tmp_path):
    with repmode.trace(tmp_path / "n1.trace", native=True):
        conv_step(1)
    with repmode.trace(tmp_path / "n2.trace", native=True, reference=tmp_path / "n1.trace", keep_values=1) as t2:
        conv_step(2)
    with repmode.trace(tmp_path / "n1.trace", native=True, reference=tmp_path / "n2.trace", keep_values=1):
        conv_step(1)
    seq = next(iter(t2.kept))
    result = diff_traces(tmp_path / "n1.trace", tmp_path / "n2.trace")
    assert result.seq == seq and "max |a-b| = " in result.text
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        text = replay(tmp_path / "n2.trace", seq)
    finally:
        torch.set_num_threads(before)
    recorded = [o["digest"] for o in read_trace(tmp_path / "n2.trace")[1][seq - 1]["out"] if "digest" in o]
    for digest in recorded:
        assert f"native   {digest}  (= recorded)" in text  # same machine, same threads: the native op again
    with pytest.raises(KeyError, match="keeps no values"):
        replay(tmp_path / "n2.trace", seq + 1)


def test_replay_under_repmode_reproduces_a_repmode_trace(tmp_path):
    with repmode.trace(tmp_path / "native.trace", native=True):
        conv_step()
    with repmode.trace(tmp_path / "rep.trace", reference=tmp_path / "native.trace", keep_values=3) as t:
        conv_step()
    assert t.kept
    for seq in t.kept:
        record = read_trace(tmp_path / "rep.trace")[1][seq - 1]
        text = replay(tmp_path / "rep.trace", seq)
        for out in record["out"]:
            if "digest" in out:
                assert f"repmode  {out['digest']}  (= recorded)" in text


def test_format_is_plain_json_lines(tmp_path):
    with repmode.trace(tmp_path / "t.trace.gz"):
        torch.empty(3)
        torch.ones(3).exp()
    with gzip.open(tmp_path / "t.trace.gz", "rt") as f:
        lines = [json.loads(line) for line in f]
    header, records, footer = lines[0], lines[1:-1], lines[-1]
    assert header["format"] == "repmode-trace" and header["version"] == 1 and header["mode"] == "repmode"
    assert footer == {"footer": True, "ops": len(records), "threads": torch.get_num_threads()}
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    empty = next(r for r in records if r["op"].startswith("aten.empty"))
    assert empty["out"][0] == {"uninitialised": True, "shape": [3], "dtype": "float32", "device": "cpu"}
    exp = next(r for r in records if r["op"] == "aten.exp.default")
    assert exp["out"][0]["digest"] == repmode.digest(torch.ones(3).exp())  # the canonical digest
    assert set(exp) == {"seq", "op", "phase", "site", "out"}


def test_native_trace_keeps_the_scripts_own_blocks_inert(tmp_path):
    with repmode.trace(tmp_path / "n.trace", native=True):
        with repmode.enabled():
            torch.polar(torch.ones(4), torch.ones(4))  # would raise under repmode: the block is inert
    ops = [r["op"] for r in read_trace(tmp_path / "n.trace")[1]]
    assert "aten.polar.default" in ops


def test_cli_trace_diff_replay(tmp_path):
    script = tmp_path / "step.py"
    script.write_text("import torch\ntorch.manual_seed(0)\nx = torch.randn(64, 64)\nprint((x @ x).sum().item())\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "repmode", *args], capture_output=True, text=True, env=env,
                              timeout=300)

    a, b = cli("trace", "--out", str(tmp_path / "a.trace"), str(script)), \
        cli("trace", "--out", str(tmp_path / "b.trace"), str(script))
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    assert a.stdout == b.stdout and "ops recorded" in a.stderr
    same = cli("diff", str(tmp_path / "a.trace"), str(tmp_path / "b.trace"))
    assert same.returncode == 0 and "identical" in same.stdout
    n = cli("trace", "--native", "--out", str(tmp_path / "n.trace"), "--reference", str(tmp_path / "a.trace"),
            "--keep-values", "1", str(script))
    assert n.returncode == 0
    different = cli("diff", str(tmp_path / "a.trace"), str(tmp_path / "n.trace"))
    assert different.returncode == 1 and "first difference at #" in different.stdout
    seq = int(different.stdout.split("first difference at #")[1].split()[0])
    again = cli("replay", str(tmp_path / "n.trace"), "--op", str(seq))
    assert again.returncode == 0 and "(= recorded)" in again.stdout


def test_traces_from_different_cpu_paths_compare_equal(tmp_path):
    """Traces made on different hardware paths (here the scalar and the SIMD kernels, as on two
    machines) compare op by op; repmode's are identical."""
    script = tmp_path / "job.py"
    script.write_text(
        "import torch\ntorch.manual_seed(0)\nm = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.Tanh(), "
        "torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3))\nx = torch.randn(16, 2, 8, 8)\n"
        "torch.nn.functional.cross_entropy(m(x), torch.arange(16) % 3).backward()\n")
    base = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    for isa in ("scalar", repmode.cpu_isa()):
        run = subprocess.run([sys.executable, "-m", "repmode", "trace", "--out", str(tmp_path / f"{isa}.trace"),
                              str(script)], capture_output=True, text=True, timeout=300,
                             env=dict(base, REPMODE_CPU_ISA=isa))
        assert run.returncode == 0, run.stderr
    result = diff_traces(tmp_path / "scalar.trace", tmp_path / f"{repmode.cpu_isa()}.trace")
    assert result.kind == "identical", result.text
    assert result.matched > 20


# ---- files that are missing, unreadable or truncated: one line, exit status 2 --------------------

def _cli_fails_in_one_line(capsys, *args) -> str:
    from repmode.tools import cli

    assert cli.main(list(args)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1, captured.err
    return captured.err.strip()


def test_cli_reports_missing_unreadable_and_truncated_traces_in_one_line(tmp_path, capsys):
    # diff raised a raw traceback on these; replay of a missing file said "keeps no values for op #3"
    good, good_gz = tmp_path / "good.trace", tmp_path / "good.trace.gz"
    for path in (good, good_gz):
        with repmode.trace(path):
            torch.ones(3).mul(2).sum()
    text = good.read_text(encoding="utf-8")
    (tmp_path / "cut.trace").write_text(text[: text.index("\n", text.index("\n") + 1) + 20], encoding="utf-8")
    (tmp_path / "cut.trace.gz").write_bytes(good_gz.read_bytes()[:60])
    (tmp_path / "plain.trace.gz").write_text(text, encoding="utf-8")
    (tmp_path / "script.py").write_text("print('not a trace')\n", encoding="utf-8")
    missing = str(tmp_path / "nosuch.trace.gz")
    g = str(good)

    assert _cli_fails_in_one_line(capsys, "diff", g, missing) == f"repmode diff: {missing}: no such file"
    assert "cut.trace: truncated or corrupt (line 3" in _cli_fails_in_one_line(
        capsys, "diff", g, str(tmp_path / "cut.trace"))
    assert "cut.trace.gz: truncated" in _cli_fails_in_one_line(capsys, "diff", str(tmp_path / "cut.trace.gz"), g)
    assert "not gzip-compressed" in _cli_fails_in_one_line(capsys, "diff", g, str(tmp_path / "plain.trace.gz"))
    assert "script.py: not a repmode trace" in _cli_fails_in_one_line(capsys, "diff", g, str(tmp_path / "script.py"))
    assert "is a directory" in _cli_fails_in_one_line(capsys, "diff", g, str(tmp_path))
    assert _cli_fails_in_one_line(capsys, "replay", missing, "--op", "3") == f"repmode replay: {missing}: no such file"
    assert "has no op #99 (it records ops #1 to #" in _cli_fails_in_one_line(capsys, "replay", g, "--op", "99")
    (tmp_path / "good.trace.values.pt").write_bytes(b"not a torch file")
    assert "good.trace.values.pt: truncated or not a values file" in _cli_fails_in_one_line(
        capsys, "replay", g, "--op", "1")

    script, out = str(tmp_path / "script.py"), tmp_path / "out.trace"
    assert "cannot write the trace" in _cli_fails_in_one_line(
        capsys, "trace", "--out", str(tmp_path / "no" / "such" / "dir" / "x.trace"), script)
    assert _cli_fails_in_one_line(capsys, "trace", "--out", str(out), "--reference", missing, script) == \
        f"repmode trace: {missing}: no such file"
    assert not out.exists()  # checked before anything is written or run


def test_read_trace_errors_are_value_errors_naming_the_file(tmp_path):
    from repmode.tools.trace import TraceFileError

    with pytest.raises(TraceFileError, match="nosuch.trace: no such file"):
        read_trace(str(tmp_path / "nosuch.trace"))
    assert issubclass(TraceFileError, ValueError)  # what read_trace raised before for a foreign file
