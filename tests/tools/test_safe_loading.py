"""Everything repmode reads back loads without running code: a trace's kept values
(``<trace>.values.pt``, torch.load with weights_only=True and only repmode's own plain classes
allowed), golden digest files (JSON of strings), random states (bytes / tensors that
``torch.load(weights_only=True)`` accepts). A crafted file is refused with a clear error, and
what it would have run does not run."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import repmode
from repmode.tools import cli
from repmode.tools.divergence import diff_traces, replay
from repmode.tools.trace import SAFE_GLOBALS, SavedGenerator, SavedMemoryFormat, TraceFileError, load_values

pytest_plugins = ["pytester"]


class _RunsCode:
    """Pickles as a call of ``exec`` on a statement that writes a marker file: loading the pickle
    with a plain unpickler would run it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


def _two_traces_with_kept_values(tmp_path: Path) -> tuple[Path, Path, int]:
    """a.trace and b.trace (b keeps the values of the op that differs from a), and that op's number."""
    a, b = tmp_path / "a.trace", tmp_path / "b.trace"
    with repmode.trace(a):
        torch.full((3, 4), 1.5).exp()
    with repmode.trace(b, reference=a, keep_values=2) as t:
        torch.full((3, 4), 2.5).exp()
    assert os.path.exists(str(b) + ".values.pt") and t.kept
    return a, b, max(t.kept)


def _plant(values_file: Path, payload, legacy: bool = False) -> None:
    if legacy == "raw":
        values_file.write_bytes(pickle.dumps(payload))
    else:
        torch.save(payload, values_file, _use_new_zipfile_serialization=not legacy)


@pytest.mark.parametrize("legacy", [False, True, "raw"], ids=["torch.save zip", "torch.save legacy", "raw pickle"])
def test_a_values_file_that_would_run_code_is_refused_and_nothing_runs(tmp_path, capsys, legacy):
    a, b, seq = _two_traces_with_kept_values(tmp_path)
    marker = tmp_path / "code-ran"
    values = Path(str(b) + ".values.pt")
    # a values file of the right shape whose op entry hides the payload
    _plant(values, {seq: {"op": "aten.exp.default", "args": (_RunsCode(marker),), "kwargs": {}, "rng": None,
                          "outputs": [torch.zeros(3, 4)]}}, legacy)
    assert pickle.loads(pickle.dumps(_RunsCode(tmp_path / "control"))) is None  # the payload does run when trusted
    assert (tmp_path / "control").read_text() == "ran"

    # torch.save's formats: the global is named; a bare pickle is not torch.save's format at all
    expected = (f"{values}: refused: it holds exec, and a repmode values file holds only tensors and plain data: "
                "this file was not written by repmode or was altered. Nothing in it was run") if legacy != "raw" else \
        f"{values}: truncated or not a values file (not torch.save's format; nothing in it was run)"
    for call in (lambda: load_values(b), lambda: replay(b, seq), lambda: diff_traces(a, b)):
        with pytest.raises(TraceFileError) as info:
            call()
        assert str(info.value) == expected
    for command in (["replay", str(b), "--op", str(seq)], ["diff", str(a), str(b)]):
        assert cli.main(command) == 2
        assert capsys.readouterr().err == f"repmode {command[0]}: {expected}\n"
    assert not marker.exists()


def test_refused_in_a_fresh_process_too(tmp_path):
    # the CLI as a user runs it: nothing imported beforehand that a payload could lean on
    a, b, seq = _two_traces_with_kept_values(tmp_path)
    marker = tmp_path / "code-ran"
    _plant(Path(str(b) + ".values.pt"), {seq: {"op": "aten.exp.default", "args": (), "kwargs": {},
                                               "rng": _RunsCode(marker), "outputs": []}})
    proc = subprocess.run([sys.executable, "-m", "repmode", "replay", str(b), "--op", str(seq)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "refused" in proc.stderr and "Traceback" not in proc.stderr
    assert not marker.exists()


def test_other_classes_are_refused_even_harmless_ones(tmp_path):
    # only SAFE_GLOBALS of repmode's own: an allow-list, not a deny-list of dangerous callables
    _, b, seq = _two_traces_with_kept_values(tmp_path)
    values = Path(str(b) + ".values.pt")
    torch.save({seq: {"op": "aten.exp.default", "args": (Path("/tmp"),), "kwargs": {}}}, values)
    with pytest.raises(TraceFileError, match="refused: it holds pathlib.PosixPath, and"):
        load_values(b)
    assert set(SAFE_GLOBALS) == {SavedGenerator, SavedMemoryFormat}


@pytest.mark.parametrize("content, why", [
    (["a", "list"], "not a repmode values file"),
    ({"1": {"op": "x"}}, "not a repmode values file"),  # keys are op numbers
    ({1: "not a dict"}, "not a repmode values file"),
])
def test_values_of_the_wrong_shape_are_refused(tmp_path, content, why):
    _, b, _ = _two_traces_with_kept_values(tmp_path)
    torch.save(content, str(b) + ".values.pt")
    with pytest.raises(TraceFileError, match=why):
        load_values(b)


def test_values_repmode_writes_load_safely_and_replay(tmp_path):
    # a generator argument, a memory format (which did not pickle at all before) and torch's random
    # state: all round-trip through the weights_only load, and replay reproduces the recorded bits
    a, b = tmp_path / "a.trace", tmp_path / "b.trace"
    for path, seed, ref in ((a, 7, None), (b, 8, a)):
        torch.manual_seed(seed)
        with repmode.trace(path, reference=ref, keep_values=10 if ref else 0) as t:
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(2, 3, 4, 4, generator=g)
            x.clone(memory_format=torch.channels_last).mul(2)
            torch.nn.functional.dropout(x, 0.5, training=True)
    kept = load_values(b)
    assert kept.keys() == t.kept.keys() and len(kept) >= 5
    ops = {entry["op"]: entry for entry in kept.values()}
    assert isinstance(ops["aten.randn.generator"]["kwargs"]["generator"], SavedGenerator)
    assert isinstance(ops["aten.clone.default"]["kwargs"]["memory_format"], SavedMemoryFormat)
    assert any(entry["rng"] is not None for entry in kept.values())  # dropout's bernoulli keeps torch's state
    records = {r["seq"]: r for r in repmode.tools.trace.read_trace(b)[1]}
    for seq in kept:
        text = replay(b, seq)
        for out in records[seq]["out"]:
            if "digest" in out:
                assert f"repmode  {out['digest']}  (= recorded)" in text, (records[seq]["op"], text)


def test_a_memory_format_entry_naming_something_else_is_refused(tmp_path):
    saved = SavedMemoryFormat(torch.channels_last)
    assert saved.restore() is torch.channels_last
    saved.name = "load"  # torch.load: a function, not a memory format
    with pytest.raises(TraceFileError, match="not a torch.memory_format"):
        saved.restore()


def test_rng_states_load_with_weights_only(tmp_path):
    # what a checkpoint holds: repmode.get_rng_state() (bytes) and torch's state (a tensor)
    torch.manual_seed(3)
    path = tmp_path / "ckpt.pt"
    torch.save({"repmode_rng": repmode.get_rng_state(), "torch_rng": torch.get_rng_state()}, path)
    with repmode.enabled():
        expected = torch.rand(5)
    loaded = torch.load(path, weights_only=True)
    repmode.set_rng_state(loaded["repmode_rng"])
    with repmode.enabled():
        assert torch.equal(torch.rand(5), expected)
    repmode.set_rng_state(loaded["torch_rng"])
    with repmode.enabled():
        assert torch.equal(torch.rand(5), expected)


GOLDEN_TEST = """
    def test_values(golden_digest):
        import torch
        golden_digest("weights", torch.arange(6.0))
"""


@pytest.mark.parametrize("content", ['["a list"]', '{"test_values": ["weights"]}',
                                     '{"test_values": {"weights": 3}}'])
def test_golden_files_are_plain_json_of_the_right_shape(pytester, pytestconfig, content):
    import repmode.tools.pytest_plugin as plugin

    load = [] if pytestconfig.pluginmanager.is_registered(plugin) else ["-p", "repmode.tools.pytest_plugin"]
    pytester.makepyfile(test_golden=GOLDEN_TEST)
    golden = pytester.path / "golden" / "test_golden.json"
    golden.parent.mkdir()
    golden.write_text(content)
    result = pytester.runpytest(*load, "-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*repmode golden file {golden} is not a {{test: {{name: digest}}}} object of "
                                 "strings; fix it or delete it*"])
    golden.write_text(json.dumps({"test_values": {"weights": repmode.digest(torch.arange(6.0))}}))
    pytester.runpytest(*load, "-p", "no:cacheprovider", "-p", "no:hypothesispytest").assert_outcomes(passed=1)
