#!/usr/bin/env bash
# One call on a lent GPU machine (issue 30): build repmode with its CUDA module, run the GPU tests,
# the CPU-vs-CUDA crosscheck, bench_cuda.py and profile_cuda.py, then as much of the whole suite as
# time allows.
# Logs go to $OUT (at most 8 files come back); a short summary is printed last.
#
#   bash benchmarks/gpu_session.sh [seconds for the whole suite, default 0 = skip]
set -u
OUT=${OUT:-/tmp/repmode_gpu_out}
mkdir -p "$OUT"
SUITE_SECONDS=${1:-0}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
T0=$(date +%s)
step() { echo "== $1 (+$(($(date +%s) - T0)) s)"; }

step "machine"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader
  python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -1
  echo "cores $(nproc); $(grep -m1 'model name' /proc/cpuinfo); avx512f: $(grep -c -m1 avx512f /proc/cpuinfo)"
} 2>&1 | tee "$OUT/machine.txt"

step "build (REPMODE_CUDA=1, sm_90)"
if ! REPMODE_CUDA=1 REPMODE_CUDA_ARCH=90 python3 -m pip install --no-build-isolation --no-deps -e . >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"
  exit 1
fi
python3 -c "import repmode._ext as e; print('_C_cuda:', e.CUDA, e.CUDA_LOAD_ERROR, 'devices:', e.CUDA and e.CUDA.device_count())" 2>&1 | tee -a "$OUT/machine.txt"

# The crosscheck runs beside the GPU tests (both are correctness runs; the benchmarks run alone).
step "crosscheck (background) and tests/cuda on the GPU"
(timeout 240 python3 -m repmode crosscheck >"$OUT/crosscheck.md" 2>&1; echo "exit $?" >>"$OUT/crosscheck.md") &
CROSS=$!
timeout 240 python3 -m pytest tests/cuda -q -p no:cacheprovider -n 12 --timeout 120 --tb=short -rf \
  --ignore tests/cuda/test_cuda_emulated.py --ignore tests/cuda/test_cuda_sources.py >"$OUT/tests_cuda.log" 2>&1
echo "pytest exit $?" >>"$OUT/tests_cuda.log"
wait $CROSS

step "bench_cuda (alone)"
timeout 150 python3 benchmarks/bench_cuda.py --write "$OUT/bench_cuda.md" >"$OUT/bench.log" 2>&1
echo "bench exit $?" >>"$OUT/bench.log"

step "profile_cuda (where the GPU cases' time goes)"
timeout 120 python3 benchmarks/profile_cuda.py >"$OUT/profile.log" 2>&1
echo "profile exit $?" >>"$OUT/profile.log"

if [ "$SUITE_SECONDS" -gt 0 ]; then
  step "whole suite (CPU tests under torch $(python3 -c 'import torch; print(torch.__version__)'), ${SUITE_SECONDS} s at most)"
  timeout "$SUITE_SECONDS" python3 -m pytest -v -p no:cacheprovider -n 14 --timeout 300 --tb=line -rf \
    --ignore tests/cuda >"$OUT/suite.log" 2>&1
  echo "suite exit $?" >>"$OUT/suite.log"
fi

step "summary"
cat "$OUT/machine.txt"
echo "--- tests/cuda:"
grep -E "^(FAILED|ERROR)" "$OUT/tests_cuda.log" | cut -c1-220 | head -40
tail -3 "$OUT/tests_cuda.log"
echo "--- crosscheck:"
cat "$OUT/crosscheck.md" | cut -c1-200 | tail -40
echo "--- bench:"
cat "$OUT/bench.log" | tail -14
echo "--- profile:"
grep -E "^## " "$OUT/profile.log"; tail -1 "$OUT/profile.log"
if [ -f "$OUT/suite.log" ]; then
  echo "--- suite:"
  grep -E "(FAILED|ERROR) tests" "$OUT/suite.log" | cut -c1-200 | head -20; echo "passed: $(grep -c "PASSED" "$OUT/suite.log")"
  tail -2 "$OUT/suite.log"
fi
step "done"
