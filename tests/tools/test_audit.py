"""`python -m repmode audit` (and the `repmode` console script): runs a script under a non-strict
block and lists exactly the unsupported ops it reached, keeping the script's output and status."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    return env


def audit(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "repmode", "audit", *args], capture_output=True, text=True,
                          env=_env(), cwd=cwd, timeout=600)


def write_script(tmp_path, body: str, name="script.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def line_of(path, marker: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


ONE_OF_EACH = """
    import sys
    import torch
    x = torch.ones(8) * 2 + 1          # supported
    y = torch.polar(x, x)               # unsupported
    print("script output", sys.argv[1:])
"""


def test_lists_only_the_unsupported_op_with_its_line_and_exits_1(tmp_path):
    script = write_script(tmp_path, ONE_OF_EACH)
    run = audit(str(script), "--flag", "value")
    assert run.returncode == 1, run.stderr
    assert "script output ['--flag', 'value']" in run.stdout  # the script's argv and output are kept
    rows = [line for line in run.stdout.splitlines() if "aten." in line]
    assert len(rows) == 1, run.stdout
    assert "aten.polar.default" in rows[0] and "float32" in rows[0] and "cpu" in rows[0]
    assert rows[0].rstrip().endswith(f"{script}:{line_of(script, '# unsupported')}")


def test_json_report_on_stdout_and_the_scripts_output_on_stderr(tmp_path):
    script = write_script(tmp_path, ONE_OF_EACH)
    run = audit("--json", str(script))
    assert run.returncode == 1
    report = json.loads(run.stdout)
    assert "script output" in run.stderr
    assert report["script_exit_status"] == 0
    (record,) = report["unsupported"]
    assert record["overload"] == "aten.polar.default"
    assert record["count"] == 1 and record["dtypes"] == ["float32"] and record["devices"] == ["cpu"]
    assert record["first_call_site"] == f"{script}:{line_of(script, '# unsupported')}"


def test_report_to_a_file(tmp_path):
    script = write_script(tmp_path, ONE_OF_EACH)
    out = tmp_path / "report.json"
    run = audit("--json", "-o", str(out), str(script))
    assert run.returncode == 1
    assert "script output" in run.stdout  # with -o the script keeps its stdout
    assert json.loads(out.read_text())["unsupported"][0]["overload"] == "aten.polar.default"


def test_clean_script_exits_0(tmp_path):
    script = write_script(tmp_path, """
        import torch
        w = torch.randn(4, 3, requires_grad=True)
        (torch.randn(2, 4) @ w).relu().sum().backward()
        print("done")
    """)
    run = audit(str(script))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "done" in run.stdout and "no unsupported ops" in run.stdout


def test_the_scripts_exit_status_and_traceback_are_kept(tmp_path):
    exits = write_script(tmp_path, "import sys\nprint('bye')\nsys.exit(3)\n", "exits.py")
    run = audit(str(exits))
    assert run.returncode == 3 and "bye" in run.stdout and "status 3" in run.stdout
    fails = write_script(tmp_path, """
        import torch
        torch.polar(torch.ones(4), torch.ones(4))
        raise ValueError("boom")
    """, "fails.py")
    run = audit(str(fails))
    assert run.returncode == 1
    assert "ValueError: boom" in run.stderr and f'"{fails}", line 4' in run.stderr
    assert "repmode/tools/audit.py" not in run.stderr  # the traceback starts at the script, as python's would
    assert "aten.polar.default" in run.stdout  # ops seen before the failure are still reported


def test_blocks_the_script_opens_itself_are_audited_not_strict(tmp_path):
    script = write_script(tmp_path, """
        import torch, repmode
        with repmode.enabled():
            torch.polar(torch.ones(4), torch.ones(4))   # would raise without the audit
        print("survived")
    """)
    run = audit(str(script))
    assert run.returncode == 1 and "survived" in run.stdout
    assert "aten.polar.default" in run.stdout


def test_runs_a_module_with_dash_m(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "job.py").write_text("import torch\nprint('module ran')\ntorch.polar(torch.ones(4), torch.ones(4))\n")
    run = audit("-m", "mypkg.job", cwd=tmp_path)
    assert run.returncode == 1 and "module ran" in run.stdout
    assert "aten.polar.default" in run.stdout


def test_usage_errors_exit_2(tmp_path):
    assert audit(str(tmp_path / "missing.py")).returncode == 2
    assert audit().returncode == 2


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "repmode")
    assert os.path.exists(exe), "the repmode console script is missing: reinstall with pip install -e ."
    run = subprocess.run([exe, "audit", "--help"], capture_output=True, text=True, env=_env(), timeout=120)
    assert run.returncode == 0 and "unsupported" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("example", ["train_mlp.py", "train_cnn.py", "train_transformer.py", "train_lstm.py"])
def test_examples_need_no_unsupported_op(example):
    run = audit(os.path.join(ROOT, "examples", example), "--epochs", "1")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "repmode: no unsupported ops." in run.stdout
    assert "test accuracy" in run.stdout
