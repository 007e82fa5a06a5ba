"""Build of repmode._C (CPU, always) and repmode._C_cuda (CUDA, behind a switch) from csrc/.

No torch headers: one build serves torch 2.11-2.14. The CUDA extension is built when
REPMODE_CUDA=1, or with REPMODE_CUDA unset (or "auto") when nvcc is on the PATH and the installed
torch is a CUDA build (visible with `pip install --no-build-isolation`); REPMODE_CUDA=0 never
builds it. REPMODE_CUDA_ARCH lists the GPU architectures (default "80;90": A100, H100/H200).
"""
import concurrent.futures
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))

# Bits must not depend on the compiler's mood: no contraction of a*b+c into an FMA (FMAs are
# explicit calls), no fast-math, IEEE semantics for every operation.
FP_FLAGS = ["-O3", "-ffp-contract=off", "-fno-fast-math", "-fno-finite-math-only", "-fno-math-errno",
            "-fno-unsafe-math-optimizations"]

# The same for nvcc: no FMA contraction, denormals kept, IEEE division and square root (and never
# --use_fast_math). tests/cuda/test_cuda_sources.py compiles every .cu with these flags as well.
NVCC_FP_FLAGS = ["--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true"]

# Compile the sources in parallel (one job per core unless REPMODE_BUILD_JOBS says otherwise).
ParallelCompile("REPMODE_BUILD_JOBS").install()

# The CPU module: the one binding of csrc/bindings/entry_points.def plus every CPU kernel file.
cpu_sources = ["csrc/bindings/cpu_module.cpp"] + sorted(glob.glob("csrc/cpu/*.cpp"))

cpu_ext = Pybind11Extension(
    "repmode._C",
    cpu_sources,
    cxx_std=17,
    extra_compile_args=FP_FLAGS + ["-fopenmp", "-fvisibility=hidden"],
    extra_link_args=["-fopenmp"],
)


def torch_is_cuda_build() -> bool:
    try:
        import torch
    except ImportError:  # build isolation: torch is not visible, so this is not a CUDA install
        return False
    return torch.version.cuda is not None


def want_cuda() -> bool:
    switch = os.environ.get("REPMODE_CUDA", "auto").strip().lower()
    if switch in ("0", "off", "no", "false"):
        return False
    if switch in ("1", "on", "yes", "true"):
        if shutil.which("nvcc") is None:
            sys.exit("REPMODE_CUDA=1 but nvcc is not on the PATH")
        return True
    return shutil.which("nvcc") is not None and torch_is_cuda_build()


def cuda_home() -> str:
    """The CUDA toolkit folder (its include/cuda_runtime.h): CUDA_HOME or CUDA_PATH, nvcc's own
    folder's parent (nvcc may also be a wrapper script elsewhere), or /usr/local/cuda."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                  os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("nvcc") or "nvcc"))), "/usr/local/cuda"]
    for home in candidates:
        if home and os.path.isfile(os.path.join(home, "include", "cuda_runtime.h")):
            return home
    sys.exit("repmode's CUDA build: no CUDA toolkit found (set CUDA_HOME to the folder with include/cuda_runtime.h)")


def cuda_lib_dir(home: str) -> str:
    for sub in ("lib64", os.path.join("targets", "x86_64-linux", "lib"), "lib"):
        if os.path.isfile(os.path.join(home, sub, "libcudart_static.a")):
            return os.path.join(home, sub)
    sys.exit(f"repmode's CUDA build: libcudart_static.a not found under {home}")


def gencode_flags() -> list[str]:
    flags = []
    for arch in os.environ.get("REPMODE_CUDA_ARCH", "80;90").replace(",", ";").split(";"):
        if arch.strip():
            flags += ["-gencode", f"arch=compute_{arch.strip()},code=sm_{arch.strip()}"]
    return flags


# The kernels (every csrc/cuda/*.cu; the compile-only checks live in csrc/cuda/checks/), compiled by
# nvcc into objects that the pybind11 module csrc/bindings/cuda_module.cpp links with the static
# CUDA runtime.
CUDA_KERNEL_SOURCES = sorted(glob.glob("csrc/cuda/*.cu"))


class BuildWithCuda(build_ext):
    def build_extension(self, ext):
        if ext.name == "repmode._C_cuda":
            ext.extra_objects = self.compile_cuda_objects()
        super().build_extension(ext)

    def compile_cuda_objects(self) -> list[str]:
        """nvcc over every kernel source, in parallel (REPMODE_BUILD_JOBS, default one per core):
        each source is its own translation unit, so the order of compilation changes nothing."""
        out_dir = os.path.join(self.build_temp, "cuda")
        os.makedirs(out_dir, exist_ok=True)

        def compile_one(source: str) -> str:
            obj = os.path.join(out_dir, os.path.basename(source) + ".o")
            cmd = ["nvcc", "-c", source, "-o", obj, "-std=c++17", "-O3", *NVCC_FP_FLAGS, *gencode_flags(),
                   "-Xcompiler", "-fPIC,-fvisibility=hidden,-ffp-contract=off"]
            print(" ".join(cmd), flush=True)
            subprocess.check_call(cmd)
            return obj

        jobs = int(os.environ.get("REPMODE_BUILD_JOBS") or os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(compile_one, CUDA_KERNEL_SOURCES))


def _order_summaries_module():
    """repmode/tools/order_summaries.py, loaded by path: the build has no torch, so the repmode
    package itself cannot be imported here."""
    path = os.path.join(HERE, "repmode", "tools", "order_summaries.py")
    spec = importlib.util.spec_from_file_location("_repmode_order_summaries", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithSummaries(build_py):
    """The wheel carries repmode/tools/order_summaries.json, parsed from docs/semantics.md, so that
    `repmode ops` works from an installed package (an editable install reads docs/ itself)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        import pathlib

        summaries = _order_summaries_module()
        out = summaries.write_package_data(pathlib.Path(HERE, "docs", "semantics.md"),
                                           pathlib.Path(self.build_lib, "repmode", "tools"))
        print(f"wrote {out}", flush=True)


ext_modules = [cpu_ext]
if want_cuda():
    lib = cuda_lib_dir(cuda_home())
    ext_modules.append(Pybind11Extension(
        "repmode._C_cuda",
        ["csrc/bindings/cuda_module.cpp"],
        cxx_std=17,
        include_dirs=[os.path.join(cuda_home(), "include")],
        extra_compile_args=FP_FLAGS + ["-fvisibility=hidden"],
        library_dirs=[lib],
        libraries=["cudart_static", "dl", "rt", "pthread"],
    ))

setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildWithCuda, "build_py": BuildPyWithSummaries})
