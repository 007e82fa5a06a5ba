"""repmode's pytest plugin (repmode/tools/pytest_plugin.py), driven through inner pytest runs."""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
import torch

import repmode
import repmode.tools.pytest_plugin as plugin

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def warm_up():
    # pytester drops the modules an in-process run imported once the run ends; importing the
    # kernels and torch's code paths here first keeps later runs from importing them twice.
    repmode.supported_ops()
    with warnings.catch_warnings(), repmode.enabled(strict=False, seed=0):
        warnings.simplefilter("ignore", repmode.UnsupportedOpWarning)
        torch.polar(torch.arange(8.0), torch.arange(8.0))
        torch.rand(3) + torch.ones(3)
    repmode.digest(torch.ones(2))


@pytest.fixture
def run(pytester, pytestconfig):
    """``run(*args)``: an in-process pytest run that loads the plugin the way this run did (entry
    point or PYTEST_PLUGINS, which inner runs see too), or with ``-p`` when it was not loaded."""
    load = [] if pytestconfig.pluginmanager.is_registered(plugin) else ["-p", "repmode.tools.pytest_plugin"]

    def run_pytest(*args):
        # hypothesis' plugin would import hypothesis anew in every run (seconds each)
        return pytester.runpytest(*load, "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args)

    return run_pytest


def line_of(path: Path, marker: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


MARKER_TESTS = """
    import pytest
    import torch
    import repmode
    from repmode.mode import active_mode

    draws = {}

    def test_no_marker_runs_natively():
        assert active_mode() is None

    @pytest.mark.reproducible
    def test_polar_strict():
        assert active_mode() is not None
        torch.polar(torch.arange(8.0), torch.arange(8.0))

    @pytest.mark.reproducible(strict=False)
    def test_polar_not_strict():
        torch.polar(torch.arange(8.0), torch.arange(8.0))

    @pytest.mark.reproducible(seed=3)
    def test_rand_a():
        draws["a"] = torch.rand(5)
        torch.rand(7)  # moves the generator on; the next test's seed resets it

    @pytest.mark.reproducible(seed=3)
    def test_rand_b():
        draws["b"] = torch.rand(5)

    @pytest.mark.reproducible(seed=4)
    def test_rand_other_seed():
        draws["c"] = torch.rand(5)

    @pytest.mark.reproducible(seed=3)
    def test_rand_b_again():
        draws["b2"] = torch.rand(5)

    @pytest.mark.reproducible(strict=False)
    class TestMarkedClass:
        def test_inherits_the_marker(self):
            assert active_mode() is not None and not active_mode().strict

    def test_draws():
        assert torch.equal(draws["a"], draws["b"]) and torch.equal(draws["a"], draws["b2"])
        assert not torch.equal(draws["a"], draws["c"])
        with repmode.enabled(seed=3):  # the marker's seed is repmode.enabled's seed
            assert torch.equal(draws["a"], torch.rand(5))
"""


def test_marker_runs_the_body_under_the_mode(run, pytester):
    pytester.makepyfile(test_marker=MARKER_TESTS)
    result = run("--strict-markers")
    result.assert_outcomes(passed=8, failed=1)
    result.stdout.fnmatch_lines(["*UnsupportedOpError*aten.polar.default*", "FAILED *::test_polar_strict*"])


def test_marker_is_registered_with_help(run):
    result = run("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.reproducible(seed=0, strict=True): *repmode.enabled*"])


def test_marker_with_bad_arguments_fails_clearly(run, pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.reproducible(colour=1)
        def test_x():
            pass
    """)
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.reproducible: *colour*(seed=0, strict=True)*"])


FIXTURE_TESTS = """
    import pytest
    import torch
    import repmode
    from repmode.mode import active_mode

    def test_handle(reproducible):
        assert isinstance(reproducible, repmode.Session)
        assert active_mode() is reproducible.mode
        assert reproducible.strict and reproducible.seed == 0
        with pytest.raises(repmode.UnsupportedOpError):
            torch.polar(torch.arange(8.0), torch.arange(8.0))

    @pytest.mark.reproducible(seed=7, strict=False)
    def test_handle_takes_the_markers_arguments(reproducible):
        assert reproducible.seed == 7 and not reproducible.strict
        assert active_mode() is reproducible.mode  # one block: the marker opened no second one
        torch.polar(torch.arange(8.0), torch.arange(8.0))
        torch.polar(torch.arange(4.0), torch.arange(4.0))
        (report,) = reproducible.report()
        assert report.overload == "aten.polar.default" and report.count == 2
        assert "aten.polar.default" in reproducible.report_text()

    def test_seed_zero(reproducible):
        got = torch.rand(4)
        with repmode.enabled(seed=0):
            assert torch.equal(got, torch.rand(4))
"""


def test_fixture_yields_the_session_handle(run, pytester):
    pytester.makepyfile(test_fixture=FIXTURE_TESTS)
    run().assert_outcomes(passed=3)


def test_fixture_requested_inside_the_body_fails_clearly(run, pytester):
    pytester.makepyfile("""
        def test_late(request):
            request.getfixturevalue("reproducible")
    """)
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*reproducible fixture was requested inside the test body*as an argument*"])


OPTION_TESTS = """
    import pytest
    import torch
    import repmode
    from repmode.mode import active_mode

    def test_supported(request):
        under_mode = request.config.getoption("repmode") or request.config.getoption("repmode_audit")
        assert (active_mode() is not None) == under_mode
        assert torch.equal(torch.ones(3) + 1, torch.full((3,), 2.0))

    def test_polar():
        torch.polar(torch.arange(8.0), torch.arange(8.0))  # first polar
        torch.polar(torch.arange(8.0), torch.arange(8.0))

    @pytest.mark.reproducible(strict=False)
    def test_marked_not_strict():
        torch.polar(torch.arange(4.0), torch.arange(4.0))  # first marked

    def test_own_strict_block():
        with repmode.enabled():
            torch.polar(torch.arange(8.0), torch.arange(8.0))  # first own
"""


def test_repmode_option_runs_every_test_strict(run, pytester):
    pytester.makepyfile(test_options=OPTION_TESTS)
    run().assert_outcomes(passed=3, failed=1)  # only the test's own strict block fails natively
    result = run("--repmode")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines_random(["FAILED *::test_polar - *", "FAILED *::test_own_strict_block - *"])
    # Count the traceback's error lines: the short summary repeats the message in full only when
    # pytest sees a CI environment, so it is not counted.
    raised = [line for line in result.stdout.lines
              if re.match(r"E\s+repmode\.errors\.UnsupportedOpError: repmode has no reproducible", line)]
    assert len(raised) == 2
    assert "= repmode audit =" not in result.stdout.str()


def test_audit_option_lists_unsupported_ops_per_test(run, pytester):
    path = pytester.makepyfile(test_options=OPTION_TESTS)
    # -W error: the audit keeps its warnings out of the run, so warnings-as-errors suites pass
    result = run("--repmode-audit", "-W", "error::repmode.UnsupportedOpWarning")
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    summary = out[out.index("repmode audit ="):]
    assert "3 of 4 test(s) ran unsupported ops natively" in summary
    assert "test_supported" not in summary
    line = {name: line_of(path, f"# first {name}") for name in ("polar", "marked", "own")}
    result.stdout.fnmatch_lines([
        "*= repmode audit =*",
        "test_options.py::test_polar",
        f"    aten.polar.default  calls: 2  first at {path.name}:{line['polar']}",
        "test_options.py::test_marked_not_strict",
        f"    aten.polar.default  calls: 1  first at {path.name}:{line['marked']}",
        "test_options.py::test_own_strict_block",  # the body's own strict block does not escape the audit
        f"    aten.polar.default  calls: 1  first at {path.name}:{line['own']}",
    ])


def test_audit_with_no_unsupported_op_says_so(run, pytester):
    pytester.makepyfile("""
        import pytest
        import torch

        def test_a(reproducible):
            assert not reproducible.strict  # the audit's settings win over the fixture's
            torch.ones(2).sum()

        @pytest.mark.reproducible(strict=True)
        def test_b():
            torch.ones(2) * 3
    """)
    result = run("--repmode-audit")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*= repmode audit =*", "repmode audit: no unsupported ops in the 2 test(s) run *"])


def test_repmode_and_audit_options_are_exclusive(run, pytester):
    pytester.makepyfile("def test_x(): pass")
    result = run("--repmode", "--repmode-audit")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--repmode and --repmode-audit exclude each other*"])


GOLDEN_TESTS = """
    import pytest
    import torch
    import repmode

    SCALE = {scale}

    def test_values(golden_digest):
        golden_digest("weights", torch.arange(6.0).reshape(2, 3) * SCALE)
        {extra}

    class TestGroup:
        @pytest.mark.parametrize("n", [2, 3])
        def test_param(self, golden_digest, n):
            value = golden_digest("ones", torch.ones(n))
            assert value == repmode.digest(torch.ones(n))
"""


def golden_tests(scale=1.0, extra=""):
    return GOLDEN_TESTS.format(scale=scale, extra=extra)


def test_golden_digest_records_then_checks(run, pytester):
    pytester.makepyfile(test_golden=golden_tests())
    golden = pytester.path / "golden" / "test_golden.json"

    result = run()  # nothing recorded yet
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([f"*no golden digest 'weights' for test_values: {golden} does not exist; "
                                 "record it with `pytest --repmode-update-golden`*"])

    result = run("--repmode-update-golden")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*= repmode golden digests =*", f"wrote {golden}"])
    text = golden.read_text()
    stored = json.loads(text)
    weights = repmode.digest(torch.arange(6.0).reshape(2, 3))
    assert stored == {
        "TestGroup::test_param[2]": {"ones": repmode.digest(torch.ones(2))},
        "TestGroup::test_param[3]": {"ones": repmode.digest(torch.ones(3))},
        "test_values": {"weights": weights},
    }
    assert text == json.dumps(stored, indent=2, sort_keys=True) + "\n"  # sorted and stable for review

    run().assert_outcomes(passed=3)
    result = run("--repmode-update-golden")  # nothing changed: the file is left alone
    assert "repmode golden digests" not in result.stdout.str()

    pytester.makepyfile(test_golden=golden_tests(scale=2.0))
    result = run()
    result.assert_outcomes(passed=2, failed=1)
    changed = repmode.digest(torch.arange(6.0).reshape(2, 3) * 2.0)
    result.stdout.fnmatch_lines(["*golden digest 'weights' of test_values changed*",
                                 f"*stored: {weights}*", f"*new:    {changed}*"])

    pytester.makepyfile(test_golden=golden_tests(extra='golden_digest("bias", torch.zeros(3))'))
    result = run()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"*no golden digest 'bias' for test_values: {golden} has no entry for it; "
                                 "record it with `pytest --repmode-update-golden`*"])


def test_golden_update_merges_with_the_stored_values(run, pytester):
    pytester.makepyfile(test_golden=golden_tests())
    golden = pytester.path / "golden" / "test_golden.json"
    run("--repmode-update-golden").assert_outcomes(passed=3)
    before = json.loads(golden.read_text())

    pytester.makepyfile(test_golden=golden_tests(scale=2.0, extra='golden_digest("bias", torch.zeros(3))'))
    run("--repmode-update-golden", "-k", "test_values").assert_outcomes(passed=1, deselected=2)
    after = json.loads(golden.read_text())
    assert after["test_values"] == {"weights": repmode.digest(torch.arange(6.0).reshape(2, 3) * 2.0),
                                    "bias": repmode.digest(torch.zeros(3))}
    assert {k: v for k, v in after.items() if k != "test_values"} == \
        {k: v for k, v in before.items() if k != "test_values"}  # tests not run keep their entries
    run().assert_outcomes(passed=3)


def test_golden_name_used_twice_with_different_values_fails(run, pytester):
    pytester.makepyfile("""
        import torch

        def test_twice(golden_digest):
            golden_digest("x", torch.ones(2))
            golden_digest("x", torch.zeros(2))
    """)
    result = run("--repmode-update-golden")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golden_digest('x') was called twice in test_twice with different values*"])


def test_entry_point_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"repmode": "repmode.tools.pytest_plugin"}
    assert plugin.__name__ == "repmode.tools.pytest_plugin"
    assert callable(plugin.pytest_addoption) and callable(plugin.pytest_configure)


def test_plugin_module_imports_no_torch():
    # The plugin's own imports stay light; torch and repmode load when a test asks for them.
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('plugin', {plugin.__file__!r})\n"
            "sys.modules['plugin'] = module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "print(sorted(m for m in ('torch', 'repmode', 'numpy') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---- pytest-randomly reseeds torch and repmode's stream through repmode's entry point -------------

def _declared_seeder() -> str:
    """The entry point as pyproject.toml declares it (read from the source tree: the installed
    metadata may come from another checkout)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["entry-points"]["pytest_randomly.random_seeder"]["repmode"]


def _draws(seed: int, seeder) -> torch.Tensor:
    seeder(seed)
    with repmode.enabled():
        return torch.rand(5)


def test_random_seeder_entry_point_reseeds_torch_and_repmode():
    target = _declared_seeder()
    assert target == "repmode.tools.pytest_plugin:random_seeder"
    module, _, name = target.partition(":")
    seeder = getattr(importlib.import_module(module), name)
    saved = torch.get_rng_state(), repmode.get_rng_state()
    try:
        first = _draws(20260, seeder)
        assert torch.initial_seed() == 20260
        assert torch.equal(_draws(20260, seeder), first)  # reseeded: the same numbers again
        assert not torch.equal(_draws(20261, seeder), first)
        seeder(2**32 + 5)  # pytest-randomly's seeds plus per-test offsets pass 2**32
        assert torch.initial_seed() == 2**32 + 5
    finally:
        torch.set_rng_state(saved[0])
        repmode.set_rng_state(saved[1])


def test_pytest_randomly_reseeds_each_test(tmp_path):
    # An inner pytest run with pytest-randomly (when importable) and repmode's entry point, declared
    # in a stand-in dist-info (the installed repmode's metadata may predate it): test_b draws the
    # same numbers whether test_a ran before it or not.
    spec = importlib.util.find_spec("pytest_randomly")
    if spec is None:
        pytest.skip("pytest-randomly is not installed")
    site = tmp_path / "site"
    info = site / "repmode_seeder_stand_in-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: repmode-seeder-stand-in\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[pytest_randomly.random_seeder]\nrepmode = {_declared_seeder()}\n")
    tests = tmp_path / "inner"
    tests.mkdir()
    (tests / "test_draws.py").write_text(
        "import json, os, torch, repmode\n"
        "def _record(name):\n"
        "    with repmode.enabled():\n"
        "        x = torch.rand(4)\n"
        "    with open(os.environ['DRAWS'], 'a') as f:\n"
        "        f.write(json.dumps([name, x.tolist(), torch.rand(2).tolist()]) + '\\n')\n"
        "def test_a():\n    _record('a')\n"
        "def test_b():\n    _record('b')\n")
    path = os.pathsep.join([str(ROOT), str(site), str(Path(spec.origin).parents[1]), os.environ.get("PYTHONPATH", "")])

    def inner(*args) -> dict:
        draws = tmp_path / "draws.jsonl"
        draws.unlink(missing_ok=True)
        env = dict(os.environ, PYTHONPATH=path, DRAWS=str(draws))
        seed = [] if "no:randomly" in args else ["--randomly-seed=7"]
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *seed, *args, str(tests)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return {name: (rep, native) for name, rep, native in map(json.loads, draws.read_text().splitlines())}

    both, alone = inner(), inner("-k", "test_b")
    assert alone["b"] == both["b"]  # repmode's stream and torch's generator reseeded before test_b
    assert both["a"] != both["b"]  # seeds differ per test (the test id is part of the seed)
    assert inner("-p", "no:randomly", "-k", "test_b")["b"] != alone["b"]  # without the plugin, no reseed
