"""Build of repmode._C from csrc/. No torch headers: one build serves torch 2.11-2.13."""
import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

# Bits must not depend on the compiler's mood: no contraction of a*b+c into an FMA (FMAs are
# explicit calls), no fast-math, IEEE semantics for every operation.
FP_FLAGS = ["-O3", "-ffp-contract=off", "-fno-fast-math", "-fno-finite-math-only", "-fno-math-errno",
            "-fno-unsafe-math-optimizations"]

# Compile the sources in parallel (one job per core unless REPMODE_BUILD_JOBS says otherwise).
ParallelCompile("REPMODE_BUILD_JOBS").install()

sources = sorted(glob.glob("csrc/*.cpp")) + sorted(glob.glob("csrc/cpu/*.cpp"))

ext = Pybind11Extension(
    "repmode._C",
    sources,
    cxx_std=17,
    extra_compile_args=FP_FLAGS + ["-fopenmp", "-fvisibility=hidden"],
    extra_link_args=["-fopenmp"],
)

setup(ext_modules=[ext], cmdclass={"build_ext": build_ext})
