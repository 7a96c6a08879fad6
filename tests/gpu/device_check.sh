#!/usr/bin/env bash
# The prepared check for a lent GPU machine: builds zt_gpu (kernels for sm_80 and sm_90, with
# compute_80 PTX for newer GPUs) and runs the gpu-labelled tests. Prints the device, then one
# summary line, then only what failed or skipped. Exits non-zero if any test failed, or if a
# GPU is visible and a test still skipped (a skip there would hide a broken device setup).
set -euo pipefail
cd "$(dirname "$0")/../.."
log_dir="$(mktemp -d)"
trap 'rm -rf "$log_dir"' EXIT

echo "== device"
gpu_visible=0
if nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader \
  2>/dev/null; then
  gpu_visible=1
elif nvidia-smi -L 2>/dev/null; then
  gpu_visible=1
else
  echo "nvidia-smi found no GPU"
fi

echo "== build zt_gpu"
scripts/setup
build_start=$SECONDS
if ! { cmake --preset default -DZT_BUILD_BENCH=OFF -DZT_CUDA=ON &&
  cmake --build --preset default -j "$(nproc)" --target zt_gpu; } >"$log_dir/build.log" 2>&1; then
  tail -n 60 "$log_dir/build.log"
  echo "device_check: build failed"
  exit 1
fi
echo "built in $((SECONDS - build_start)) s"

echo "== ctest -L gpu"
status=0
ctest --preset default -L gpu --output-on-failure >"$log_dir/ctest.log" 2>&1 || status=$?
grep -E "tests passed|Total Test time" "$log_dir/ctest.log" || true
grep -E "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Not Run|\*\*\*Skipped" "$log_dir/ctest.log" |
  sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.+\*\*\*/ ***/' || true
if ((status != 0)); then
  echo "== output of the failing tests"
  grep -E "^(/|\[  FAILED  \]|.*Failure|  Actual|Expected|Which is|.*differ)" "$log_dir/ctest.log" |
    head -n 80 || true
  echo "device_check: gpu tests FAILED"
  exit 1
fi
if ((gpu_visible)) && grep -q "\*\*\*Skipped" "$log_dir/ctest.log"; then
  echo "device_check: a GPU is visible but tests skipped (cudaGetDeviceCount saw none?)"
  exit 1
fi
echo "device_check: ok"
