"""Run the CUDA tests (tests/cuda) on a machine without a GPU, against the host emulation of the
kernels (tests/cuda/emulator; docs/cuda.md, "Emulated runs"). Not a GPU run: it checks the
kernels' indexing, partitioning, shared-memory and warp logic, not real-GPU behaviour.

    python tests/cuda/emulate.py [pytest arguments]     # default target: the kernel tests of tests/cuda

REPMODE_EMU_GRID_CAP (default 3) caps the blocks of every launch (the kernels are grid-stride).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE / "emulator"))

import build  # noqa: E402  (tests/cuda/emulator/build.py)

# In tests/cuda but not kernel tests: the nvcc compile check, and the CI subset that itself starts
# an emulated run. The default target leaves them out.
NOT_KERNEL_TESTS = ("test_cuda_emulated.py", "test_cuda_sources.py")


def pytest_command(args: list[str]) -> list[str]:
    if not any(Path(a.split("::")[0]).exists() for a in args if not a.startswith("-")):
        args = [*args, str(HERE), *(f"--ignore={HERE / name}" for name in NOT_KERNEL_TESTS)]
    return [sys.executable, "-m", "pytest", "-p", "emulated_cuda_plugin", *args]


def environment(module_dir: Path) -> dict[str, str]:
    env = dict(os.environ, REPMODE_EMU_MODULE_DIR=str(module_dir))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE / "emulator"), env.get("PYTHONPATH")) if p)
    return env


def main(args: list[str]) -> int:
    t0 = time.monotonic()
    module_dir = build.build()
    print(f"emulated module: {module_dir} ({time.monotonic() - t0:.1f} s)", flush=True)
    return subprocess.run(pytest_command(args), cwd=ROOT, env=environment(module_dir)).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
