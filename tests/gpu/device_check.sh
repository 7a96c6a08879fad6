#!/usr/bin/env bash
# The prepared check for a lent GPU machine: builds the CUDA targets for the local GPU and
# runs the gpu-labelled tests, printing the device and the results. One short call.
set -euo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
scripts/setup
cmake --preset default -DZT_BUILD_BENCH=OFF >/dev/null
cmake --build --preset default -j "$(nproc)" --target zt_gpu
ctest --preset default -L gpu --output-on-failure
