"""The installed-package smoke test (run by .ci/package_smoke.sh, from a folder outside the checkout).

    python package_smoke.py digest                        # print the example's digest (any install)
    python package_smoke.py check --expect-digest D --repo R   # the whole smoke test of an installed wheel

``check`` asserts that repmode is imported from the installed package (not from the checkout R),
that the short strict-mode example gives digest D (the source tree's) on 1 and 2 threads, and that
the installed commands work: ``repmode ops`` (the table and single-op queries), ``repmode env``
(with its self-check), ``repmode audit`` on a small script, and the pytest plugin through its
``pytest11`` entry point (marker, golden digests recorded, compared, and a mismatch caught).
Standard library, torch and repmode only; each failure names its step.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path


def example_digest() -> str:
    """Five AdamW steps of a small MLP with dropout, in strict mode: random init, dropout masks,
    matrix products, GELU, cross entropy, backward and the optimizer all run through repmode."""
    import torch
    import torch.nn.functional as F

    import repmode

    with repmode.enabled(seed=0):
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Dropout(0.1),
                                    torch.nn.Linear(32, 4))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        x = torch.randn(64, 16)
        y = torch.randint(0, 4, (64,))
        for _ in range(5):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    return repmode.digest(model)


def _run(step: str, cmd: list[str], expect: int = 0, cwd: str | None = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != expect:
        sys.exit(f"package smoke test, {step}: `{' '.join(cmd)}` exited {proc.returncode} (expected {expect})\n"
                 f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
    return proc.stdout + proc.stderr


def _check(cond: bool, step: str, detail: str) -> None:
    if not cond:
        sys.exit(f"package smoke test, {step}: {detail}")
    print(f"ok  {step}", flush=True)


def check(expect_digest: str, repo: Path) -> None:
    import torch

    import repmode

    where = Path(repmode.__file__).resolve()
    _check(repo.resolve() not in where.parents and "site-packages" in where.parts, "import",
           f"repmode came from {where}, not from an installed package")
    bindir = Path(sys.executable).parent
    exe = [str(bindir / "repmode")]

    for threads in (1, 2):
        torch.set_num_threads(threads)
        got = example_digest()
        _check(got == expect_digest, f"example digest, {threads} thread(s)",
               f"{got} differs from the source tree's {expect_digest}")

    table = _run("repmode ops", exe + ["ops"])
    rows = [line for line in table.splitlines() if line.startswith("| `aten.")]
    _check(len(rows) > 500 and any(r.startswith("| `aten.mm.default` | kernel |") for r in rows)
           and "each output a four-level sum over k" in table, "repmode ops",
           f"the table has {len(rows)} rows, or lacks aten.mm.default's row with its order summary")
    one = _run("repmode ops mm", [sys.executable, "-m", "repmode", "ops", "aten.mm.default"])
    _check(one.splitlines()[2].startswith("| `aten.mm.default` | matmul | kernel |"), "repmode ops aten.mm.default",
           one)
    missing = _run("repmode ops (unknown op)", exe + ["ops", "no_such_op"], expect=1)
    _check("no registered overload" in missing, "repmode ops (unknown op)", missing)

    env = json.loads(_run("repmode env --json", exe + ["env", "--json"]))
    _check(env["repmode"]["version"] == repmode.__version__ and env["self_check"]["agrees"] is True,
           "repmode env --json", json.dumps(env, indent=1)[:2000])
    _check("canonical bits: yes" in _run("repmode env", exe + ["env"]), "repmode env", "no 'canonical bits: yes'")

    with tempfile.TemporaryDirectory(prefix="repmode-smoke-") as tmp:
        script = Path(tmp, "uses_polar.py")  # torch.polar: complex output, unsupported by repmode
        script.write_text(textwrap.dedent("""\
            import torch
            a = torch.rand(8, 8)
            z = torch.polar(a @ a.T, a)
            print("script ran", z.shape)
            """))
        audit = _run("repmode audit", exe + ["audit", str(script)], expect=1)
        _check("script ran" in audit and "aten.polar.default" in audit, "repmode audit", audit)

        tests = Path(tmp, "tests")
        tests.mkdir()
        Path(tests, "test_model.py").write_text(textwrap.dedent("""\
            import pytest
            import torch

            import repmode


            @pytest.mark.reproducible(seed=0)
            def test_linear_is_unchanged(golden_digest):
                model = torch.nn.Linear(8, 3)
                out = model(torch.randn(5, 8)).sum()
                out.backward()
                golden_digest("grad", model.weight.grad)


            def test_fixture_opens_a_strict_block(reproducible):
                with pytest.raises(repmode.UnsupportedOpError):
                    torch.polar(torch.ones(4), torch.ones(4))
            """))
        pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        _run("pytest plugin (record goldens)", pytest_cmd + ["--repmode-update-golden"], cwd=tmp)
        golden = Path(tests, "golden", "test_model.json")
        _check(golden.is_file(), "pytest plugin (golden file written)", f"{golden} missing")
        out = _run("pytest plugin (compare goldens)", [c for c in pytest_cmd if c != "-q"], cwd=tmp)
        _check("2 passed" in out, "pytest plugin (compare goldens)", out)
        _check(f"repmode: repmode {repmode.__version__}, NUMERICS_VERSION" in out and "canonical bits: yes" in out,
               "pytest plugin (report header)", out)
        data = json.loads(golden.read_text())
        entry = data["test_linear_is_unchanged"]
        entry["grad"] = "0" * len(entry["grad"])
        golden.write_text(json.dumps(data))
        out = _run("pytest plugin (mismatch caught)", pytest_cmd, expect=1, cwd=tmp)
        _check("grad" in out and "1 failed" in out, "pytest plugin (mismatch caught)", out)
    print("package smoke test: all steps passed", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("digest")
    ck = sub.add_parser("check")
    ck.add_argument("--expect-digest", required=True)
    ck.add_argument("--repo", required=True, type=Path)
    ns = parser.parse_args()
    if ns.command == "digest":
        print(example_digest())
    else:
        check(ns.expect_digest, ns.repo)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
