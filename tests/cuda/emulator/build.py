"""Build the host emulation of repmode's CUDA kernels: the module `repmode_cuda_emulated`, with
the functions of repmode._C_cuda (csrc/bindings/cuda_module.cpp) that this tree implements.

    python tests/cuda/emulator/build.py [--out DIR]      # prints the folder holding the module

Every csrc/cuda/*.cu (the compile-only checks live in csrc/cuda/checks/) is compiled by g++ against the shim
cuda_runtime.h of this folder, after one rewrite: each launch `k<<<grid, block, smem,
stream>>>(args)` becomes `::repmode_emu::launch([&] { k(args); }, grid, block, smem, stream)`.
The csrc tree is copied so its relative includes keep working. The result is cached under a
hash of every input (csrc, this folder, compiler, Python), so a second build is instant.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MODULE = "repmode_cuda_emulated"
CXX = os.environ.get("CXX", "g++")
FLAGS = ["-std=c++20", "-O1", "-ffp-contract=off", "-fno-fast-math", "-pthread", "-fPIC", "-w"]
DEFAULT_OUT = ROOT / "build" / "cuda-emulated"


def rewrite_launches(text: str) -> str:
    """`name<<<cfg>>>(args)` -> `::repmode_emu::launch([&] { name(args); }, cfg)`."""
    out, pos = [], 0
    while (open_at := text.find("<<<", pos)) >= 0:
        start = _name_start(text, open_at)
        close_at = text.index(">>>", open_at)
        paren = close_at + 3
        while text[paren].isspace() or text[paren] == "\\":
            paren += 1
        if text[paren] != "(":
            raise ValueError(f"launch without arguments near: {text[start:paren + 20]!r}")
        end = _matching_paren(text, paren)
        name, cfg, args = text[start:open_at].rstrip(" \t\n\\"), text[open_at + 3:close_at], text[paren + 1:end]
        out.append(text[pos:start])
        out.append(f"::repmode_emu::launch([&] {{ {name}({args}); }}, {cfg})")
        pos = end + 1
    out.append(text[pos:])
    return "".join(out)


def _name_start(text: str, at: int) -> int:
    """Start of the kernel name (identifiers, ::, one template argument list) ending at `at`."""
    i = at
    while text[i - 1].isspace() or text[i - 1] == "\\":  # a launch may span macro lines
        i -= 1
    if text[i - 1] == ">":
        depth = 0
        while True:
            i -= 1
            depth += {">": 1, "<": -1}.get(text[i], 0)
            if depth == 0:
                break
    while text[i - 1].isalnum() or text[i - 1] in "_:":
        i -= 1
    return i


def _matching_paren(text: str, at: int) -> int:
    depth = 0
    for i in range(at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses after a launch")


def kernel_sources(csrc: Path) -> list[Path]:
    return sorted((csrc / "cuda").glob("*.cu"))


def inputs_hash() -> str:
    h = hashlib.sha256()
    for base in (ROOT / "csrc", HERE):
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix in {".h", ".cuh", ".cu", ".cpp", ".def", ".py"}:
                h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes())
    version = subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True).stdout
    h.update(version.encode() + sys.version.encode() + " ".join(FLAGS).encode())
    return h.hexdigest()[:16]


def prepare_tree(work: Path) -> Path:
    """Copy csrc to work/csrc with the launches of every .cu and .cuh rewritten."""
    csrc = work / "csrc"
    shutil.copytree(ROOT / "csrc", csrc)
    for p in list((csrc / "cuda").glob("*.cu")) + list((csrc / "cuda").glob("*.cuh")):
        text = p.read_text()
        if re.search(r"extern\s+__shared__", text):
            raise NotImplementedError(f"{p.name}: dynamic shared memory is not emulated (extend cuda_runtime.h)")
        p.write_text(rewrite_launches(text))
    return csrc


def compile_all(jobs: list[tuple[Path, Path]], includes: list[str], defines: list[str] = ()) -> None:
    def one(job):
        src, obj = job
        cmd = [CXX, *FLAGS, *defines, *includes, "-x", "c++", "-c", str(src), "-o", str(obj)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"compiling {src.name} failed:\n{r.stderr[-6000:]}")

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(one, jobs))


def defined_launchers(objects: list[Path]) -> set[str]:
    names = set()
    for obj in objects:
        syms = subprocess.run(["nm", "-C", "--defined-only", str(obj)], capture_output=True, text=True,
                              check=True).stdout
        names.update(re.findall(r" T repmode::cuda::(\w+)[\[(]", syms))
    return names


def binding_source(entries: str, have: set[str]) -> tuple[str, list[str]]:
    """csrc/bindings/entry_points.def without the CUDA rows whose launchers this tree does not define."""
    missing = []

    def keep(m: re.Match) -> str:
        if m.group(2) in have:
            return m.group(0)
        missing.append(m.group(2))
        return f"// not implemented in this tree: {m.group(2)}"

    rows = r"^(REPMODE_ENTRY|REPMODE_CUDA_ENTRY|REPMODE_CUDA_CONTROL|REPMODE_ENTRY_SIZED)\s*\(\s*\w+\s*,\s*(\w+)[^)]*\)"
    text = re.sub(rows, keep, entries, flags=re.M)
    return text, missing


def build(out: Path = DEFAULT_OUT, verbose: bool = True) -> Path:
    """Folder holding the built module (built now unless the cache has it)."""
    final = out / inputs_hash()
    if (final / "missing.txt").exists():
        return final
    out.mkdir(parents=True, exist_ok=True)
    import pybind11

    with tempfile.TemporaryDirectory(dir=out) as tmp:
        work = Path(tmp)
        csrc = prepare_tree(work)
        includes = [f"-I{HERE}", f"-I{csrc / 'cuda'}", f"-I{pybind11.get_include()}",
                    f"-I{sysconfig.get_paths()['include']}"]
        kernels = [(src, work / (src.stem + ".o")) for src in kernel_sources(csrc)]
        compile_all(kernels + [(HERE / "emulator.cpp", work / "emulator.o")], includes)
        have = defined_launchers([obj for _, obj in kernels])
        entries = csrc / "bindings" / "entry_points.def"
        text, missing = binding_source(entries.read_text(), have)
        entries.write_text(text)
        binds = [(csrc / "bindings" / "cuda_module.cpp", work / "bind.o"),
                 (HERE / "emulator_bind.cpp", work / "emulator_bind.o")]
        module = [f"-DREPMODE_CUDA_MODULE_NAME={MODULE}", "-DREPMODE_CUDA_MODULE_HOOK=repmode_emu_register"]
        compile_all(binds, includes, module)
        objects = [obj for _, obj in kernels + binds] + [work / "emulator.o"]
        so = work / (MODULE + sysconfig.get_config_var("EXT_SUFFIX"))
        subprocess.run([CXX, "-shared", "-pthread", *map(str, objects), "-o", str(so)], check=True)
        (work / "missing.txt").write_text("".join(f"{m}\n" for m in missing))
        staged = out / (final.name + ".new")
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir()
        shutil.move(str(so), staged / so.name)
        shutil.move(str(work / "missing.txt"), staged / "missing.txt")
        shutil.rmtree(final, ignore_errors=True)
        staged.rename(final)
    if verbose and missing:
        print(f"launchers not implemented in this tree (left out): {', '.join(missing)}", file=sys.stderr)
    return final


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="cache folder (default: build/cuda-emulated)")
    print(build(ap.parse_args().out))


if __name__ == "__main__":
    main()
