#!/usr/bin/env bash
# Ship repmode as a library, checked end to end: build the sdist, build the wheel FROM the sdist
# (python -m build does both, so a file missing from the sdist fails here), install the wheel into
# a fresh virtual environment with torch pinned, and run .ci/package_smoke.py there from a folder
# outside the checkout. The example's digest must equal the source tree's.
#
#   .ci/package_smoke.sh            # (make package-check) work folder: a new /tmp/repmode-pkg.*
# Environment: PYTHON (python3), TORCH_VERSION (2.13.0), SOURCE_PY (the source tree's Python:
# .venv/bin/python, as `make test` leaves it), PKG_WORK (the work folder), KEEP_PKG_WORK=1 keeps it.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
SOURCE_PY=${SOURCE_PY:-$REPO/.venv/bin/python}
WORK=${PKG_WORK:-$(mktemp -d /tmp/repmode-pkg.XXXXXX)}
mkdir -p "$WORK"
[ "${KEEP_PKG_WORK:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
start=$SECONDS
step() { echo "== package check [$((SECONDS - start)) s]: $*"; }

step "the source tree's digest of the example ($SOURCE_PY)"
expect=$(cd "$REPO" && "$SOURCE_PY" .ci/package_smoke.py digest)
echo "$expect"

# The fresh environment's torch is unpacked while the extension compiles (disk against CPU).
step "a fresh virtual environment with torch==$TORCH_VERSION (in the background)"
( "$PYTHON" -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install --quiet "torch==$TORCH_VERSION" pytest ) \
    > "$WORK/venv.log" 2>&1 &
venv_pid=$!

step "sdist, then the wheel from the sdist (CPU extension only)"
"$PYTHON" -m venv "$WORK/tools"
"$WORK/tools/bin/pip" install --quiet build
rm -rf "$WORK/dist"
REPMODE_CUDA=0 "$WORK/tools/bin/python" -m build --outdir "$WORK/dist" "$REPO" > "$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log"; exit 1; }
ls -l "$WORK/dist"
wheel=$(ls "$WORK"/dist/repmode-*.whl)

step "the wheel into the fresh virtual environment"
wait "$venv_pid" || { tail -20 "$WORK/venv.log"; exit 1; }
"$WORK/venv/bin/pip" install --quiet "$wheel"
"$WORK/venv/bin/python" -c "import torch; assert torch.__version__.split('+')[0] == '$TORCH_VERSION', torch.__version__"

step "smoke test from $WORK/outside (not the checkout)"
mkdir -p "$WORK/outside"
cp "$REPO/.ci/package_smoke.py" "$WORK/outside/"
(cd "$WORK/outside" && env -u PYTHONPATH "$WORK/venv/bin/python" package_smoke.py check \
    --expect-digest "$expect" --repo "$REPO")
step "done"
