"""``repmode env``: the environment report, its JSON form, its self-check against the digests
pinned in the package, and the pytest plugin's header line."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

import repmode
from repmode.tools import cli, env
from repmode.tools.self_check_digests import PINNED

pytest_plugins = ["pytester"]


def _env_run(*args, **environ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "repmode", "env", *args], capture_output=True, text=True,
                          env={**os.environ, **environ})


def test_the_package_pins_the_battery_of_its_numerics_version():
    assert repmode.NUMERICS_VERSION in PINNED, (
        f"no self-check digests pinned for NUMERICS_VERSION {repmode.NUMERICS_VERSION}: add the entry printed by "
        "`python -m repmode env --print-pins` to repmode/tools/self_check_digests.py (keep the old ones)")
    assert set(PINNED[repmode.NUMERICS_VERSION]) == set(env._battery())


def test_this_machine_computes_the_pinned_bits_at_1_and_2_threads():
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            assert env.battery_digests() == PINNED[repmode.NUMERICS_VERSION]
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("isa", env.available_isas())
def test_every_isa_path_gives_the_pinned_bits(isa):
    proc = _env_run("--json", REPMODE_CPU_ISA=isa, OMP_NUM_THREADS="1")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["cpu"]["isa"] == isa and report["threads"]["torch"] == 1
    assert report["self_check"]["agrees"] is True
    assert {r["name"]: r["digest"] for r in report["self_check"]["rows"]} == PINNED[repmode.NUMERICS_VERSION]


def test_the_battery_leaves_torchs_random_state_and_threads_alone():
    torch.manual_seed(123)
    state, threads = torch.get_rng_state(), torch.get_num_threads()
    env.battery_digests()
    assert torch.equal(torch.get_rng_state(), state) and torch.get_num_threads() == threads


def test_the_json_report_has_every_field(capsys):
    assert cli.main(["env", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["repmode"] == {"version": repmode.__version__, "numerics_version": repmode.NUMERICS_VERSION,
                            "location": os.path.dirname(os.path.abspath(repmode.__file__))}
    assert r["torch"] == torch.__version__ and r["python"].count(".") == 2
    assert r["cpu"]["isa"] == repmode.cpu_isa() and r["cpu"]["isa"] in r["cpu"]["isa_available"]
    assert r["cpu"]["isa_available"][0] == "scalar" and r["cpu"]["model"]
    if r["cpu"]["isa"] != "scalar":  # a SIMD path runs only where the CPU has it
        assert r["cpu"]["isa"].rstrip("0123456789") in {f.rstrip("0123456789_fbwdvlqn") for f in r["cpu"]["flags"]} \
            or "avx2" in r["cpu"]["flags"]
    assert r["cpu"]["flush_denormal"] is False
    assert r["threads"]["torch"] == torch.get_num_threads()
    assert r["cuda"]["torch_build"] == torch.version.cuda and r["cuda"]["available"] == torch.cuda.is_available()
    assert r["cuda"]["repmode_extension"] == (repmode._ext.CUDA is not None)
    assert r["self_check"]["agrees"] is True and len(r["self_check"]["rows"]) == len(env._battery())


def test_the_text_report_says_yes_and_names_every_part(capsys):
    assert cli.main(["env"]) == 0
    out = capsys.readouterr().out
    for label in ("repmode ", "NUMERICS_VERSION  ", "torch ", "Python ", "CPU ", "CPU flags ", "CPU ISA path ",
                  "threads ", "CUDA ", "self-check "):
        assert f"\n{label}" in "\n" + out, label
    assert out.rstrip().endswith("this machine computes repmode's canonical bits: yes")
    assert cli.main(["env", "--no-self-check"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("canonical bits: not run")


def test_a_differing_row_says_no_and_exits_1(monkeypatch, capsys):
    wrong = dict(PINNED[repmode.NUMERICS_VERSION], conv="0" * 64)
    monkeypatch.setitem(PINNED, repmode.NUMERICS_VERSION, wrong)
    assert env.main([]) == 1
    out = capsys.readouterr().out
    assert "conv" in out and "DIFFERS (pinned 0000" in out
    assert out.rstrip().endswith("canonical bits: NO (differs: conv)")


def test_an_unpinned_numerics_version_says_unknown(monkeypatch, capsys):
    monkeypatch.delitem(PINNED, repmode.NUMERICS_VERSION)
    assert env.main([]) == 0
    assert f"unknown (this package pins no digests for NUMERICS_VERSION {repmode.NUMERICS_VERSION})" in \
        capsys.readouterr().out


def test_print_pins_prints_the_entry_to_paste(capsys):
    assert env.main(["--print-pins"]) == 0
    entry = capsys.readouterr().out
    namespace = {}
    exec("pins = {\n" + entry + "}", namespace)  # our own output, a dict literal
    assert namespace["pins"] == {repmode.NUMERICS_VERSION: PINNED[repmode.NUMERICS_VERSION]}


def test_the_pytest_header_has_the_environment_line(pytester, pytestconfig):
    import repmode.tools.pytest_plugin as plugin

    load = [] if pytestconfig.pluginmanager.is_registered(plugin) else ["-p", "repmode.tools.pytest_plugin"]
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest(*load, "-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"repmode: repmode {repmode.__version__}, "
                                 f"NUMERICS_VERSION {repmode.NUMERICS_VERSION}, torch {torch.__version__}, "
                                 f"CPU ISA {repmode.cpu_isa()} (available: *), * threads; "
                                 "canonical bits: yes"])
