"""repmode ships as a library: the sdist holds everything the build reads, the build puts the order
summaries behind `repmode ops` into the package, and an installed package (no docs/ beside it)
renders the same table as the source checkout. The end-to-end check (sdist -> wheel -> fresh
virtual environment -> smoke test from outside the checkout) is .ci/package_smoke.sh, which CI
runs after the suite (`make package-check`)."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

import repmode
from repmode.tools import ops_table, order_summaries

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def compiled_sources() -> list[Path]:
    """What setup.py hands the compilers: the CPU module, every CPU kernel file, the CUDA module and
    every CUDA kernel file (setup.py's own globs)."""
    names = (["csrc/bindings/cpu_module.cpp", "csrc/bindings/cuda_module.cpp"]
             + glob.glob("csrc/cpu/*.cpp", root_dir=ROOT) + glob.glob("csrc/cuda/*.cu", root_dir=ROOT))
    return [ROOT / n for n in sorted(names)]


def include_closure(sources: list[Path]) -> set[Path]:
    """Every file reachable from ``sources`` through ``#include "..."`` (relative to the including file)."""
    seen, todo = set(), list(sources)
    while todo:
        path = todo.pop().resolve()
        if path in seen:
            continue
        seen.add(path)
        for name in INCLUDE.findall(path.read_text(encoding="utf-8")):
            target = path.parent / name
            assert target.is_file(), f"{path.relative_to(ROOT)} includes {name!r}, which does not exist"
            todo.append(target)
    return seen


@pytest.fixture(scope="module")
def sdist_names(tmp_path_factory) -> set[str]:
    out = tmp_path_factory.mktemp("sdist")
    proc = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "REPMODE_CUDA": "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    (archive,) = out.glob("repmode-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    prefix = f"repmode-{repmode.__version__}/"
    assert all(n.startswith(prefix) or n == prefix[:-1] for n in names)
    return {n[len(prefix):] for n in names if n.startswith(prefix)}


def test_the_sdist_holds_every_source_and_header_the_build_reads(sdist_names):
    needed = include_closure(compiled_sources())
    assert len(needed) > 60  # the modules, kernels and the headers under csrc/common, cpu, cuda, bindings
    assert any(p.suffix == ".def" for p in needed) and any(p.suffix == ".cuh" for p in needed)
    missing = sorted(str(p.relative_to(ROOT)) for p in needed if str(p.relative_to(ROOT)) not in sdist_names)
    assert not missing, f"the sdist lacks files the build reads (MANIFEST.in): {missing}"


def test_the_sdist_holds_every_tracked_csrc_file_and_what_setup_reads(sdist_names):
    tracked = subprocess.run(["git", "ls-files", "csrc"], cwd=ROOT, capture_output=True, text=True, check=True)
    csrc = set(tracked.stdout.split())
    assert len(csrc) > 100
    assert csrc <= sdist_names, sorted(csrc - sdist_names)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "CHANGELOG.md", "docs/semantics.md",
                 "repmode/tools/order_summaries.py", "repmode/kernels/__init__.py", "repmode/_ext.py"):
        assert name in sdist_names, name
    assert not [n for n in sdist_names if n.endswith((".so", ".o", ".pyc"))]  # no build outputs travel


def test_the_build_writes_the_order_summaries_into_the_package(tmp_path):
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "REPMODE_CUDA": "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = tmp_path / "repmode" / "tools" / order_summaries.DATA_NAME
    data = json.loads(written.read_text(encoding="utf-8"))
    assert data["format"] == order_summaries.FORMAT
    assert data["summaries"] == ops_table.semantics_summaries(ops_table.SEMANTICS)
    assert "Matrix products" in data["summaries"] and len(data["summaries"]) > 20


def _as_installed(monkeypatch, packaged: Path) -> None:
    """ops_table as it runs from site-packages: no docs/semantics.md beside it, the build's JSON."""
    monkeypatch.setattr(ops_table, "SEMANTICS", packaged.parent / "no-docs" / "semantics.md")
    monkeypatch.setattr(order_summaries, "PACKAGED", packaged)
    assert not ops_table.in_source_checkout()


def test_an_installed_package_renders_the_same_table_as_the_checkout(tmp_path, monkeypatch, capsys):
    checkout = ops_table.render_markdown()
    assert ops_table.in_source_checkout()
    packaged = order_summaries.write_package_data(ops_table.SEMANTICS, tmp_path)
    _as_installed(monkeypatch, packaged)
    assert ops_table.render_markdown() == checkout
    assert ops_table.main(["mm"]) == 0
    assert "| `aten.mm.default` | matmul | kernel |" in capsys.readouterr().out


def test_an_installed_package_without_its_summaries_says_what_to_do(tmp_path, monkeypatch, capsys):
    _as_installed(monkeypatch, tmp_path / order_summaries.DATA_NAME)
    assert ops_table.main([]) == 2
    err = capsys.readouterr().err
    assert "order_summaries.json not found" in err and "reinstall it" in err
    (tmp_path / order_summaries.DATA_NAME).write_text('{"format": 99}')
    assert ops_table.main(["mm"]) == 2
    assert "not a repmode order_summaries.json of format 1" in capsys.readouterr().err


def test_a_build_without_docs_semantics_fails_naming_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="semantics.md not found: .* the sdist must include it"):
        order_summaries.write_package_data(tmp_path / "docs" / "semantics.md", tmp_path)


def test_versions_agree_and_the_changelog_names_the_current_release():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == repmode.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {repmode.__version__} — NUMERICS_VERSION {repmode.NUMERICS_VERSION}" in changelog
    assert project["entry-points"]["pytest11"] == {"repmode": "repmode.tools.pytest_plugin"}
    assert project["scripts"] == {"repmode": "repmode.tools.cli:main"}


def test_ci_runs_the_package_check_after_the_suite():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")]
    assert steps.index("make package-check") > steps.index("make test")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^package-check: .*\n\t.*\.ci/package_smoke\.sh", makefile, re.M)
    assert re.search(r"^wheel: .*\n\t.*-m build", makefile, re.M)
