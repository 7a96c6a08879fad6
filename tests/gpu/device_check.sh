#!/usr/bin/env bash
# The prepared check for a lent GPU machine, in one call (under 5 minutes on one H200 with
# the build): the device, a build of what the check runs (sm_90 only, to keep it short), the
# gpu-labelled tests (kernels, device layer, NCCL at world 1, CUDA-versus-CPU training, ZeRO
# stages 0-3 at world 2 on one GPU over Gloo), `zerotrain train` on the GPU with the device
# peak from its memory.json, and the GPT-2-small step benchmark (tokens/s, MFU).
# Exits non-zero if anything failed, or if a GPU is visible and a test still skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
log_dir="$(mktemp -d)"
trap 'rm -rf "$log_dir"' EXIT
arch="${ZT_CHECK_CUDA_ARCH:-90}"

echo "== device"
gpu_visible=0
if nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader \
  2>/dev/null; then
  gpu_visible=1
else
  echo "nvidia-smi found no GPU"
fi
lscpu | grep -m1 "Model name" || true

echo "== build (CUDA architecture sm_${arch})"
scripts/setup
build_start=$SECONDS
if ! { cmake --preset default -DZT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${arch}" &&
  cmake --build --preset default -j "$(nproc)" --target zt_gpu zerotrain bench_gpt_step; } \
  >"$log_dir/build.log" 2>&1; then
  tail -n 60 "$log_dir/build.log"
  echo "device_check: build failed"
  exit 1
fi
echo "built in $((SECONDS - build_start)) s"

status=0
echo "== ctest -L gpu"
ctest --preset default -L gpu --output-on-failure --timeout 240 >"$log_dir/ctest.log" 2>&1 ||
  status=$?
grep -E "tests passed|Total Test time" "$log_dir/ctest.log" || true
# Figures the tests print (CUDA-versus-CPU loss differences, NCCL bandwidth at world 1).
grep -E "^\[figure\]" "$log_dir/ctest.log" | sort -u || true
grep -E "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Not Run|\*\*\*Skipped" "$log_dir/ctest.log" |
  sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.+\*\*\*/ ***/' || true
if ((status != 0)); then
  echo "== output of the failing tests"
  grep -E "^(/|\[  FAILED  \]|.*Failure|  Actual|Expected|Which is|.*differ|.*rror)" \
    "$log_dir/ctest.log" | head -n 80 || true
fi
if ((gpu_visible)) && grep -q "\*\*\*Skipped" "$log_dir/ctest.log"; then
  echo "device_check: a GPU is visible but tests skipped (cudaGetDeviceCount saw none?)"
  status=1
fi

echo "== zerotrain train on cuda:0 (tiny GPT, 20 steps, bf16): device peak from memory.json"
run_dir="$log_dir/run"
if build/default/apps/zerotrain train configs/tiny.toml --set runtime.device=cuda \
  --set precision.dtype=bf16 --set train.steps=20 --set run.log_every=10 \
  --set run.dir="$run_dir" >"$log_dir/train.log" 2>&1; then
  tail -n 3 "$log_dir/train.log"
  python3 - "$run_dir/memory.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for rank in report["ranks"]:
    total = rank["total"]
    print(f"rank {rank['rank']} on {rank.get('device', '?')}: device peak "
          f"{total['peak_bytes'] / 2**20:.1f} MiB at '{total['peak_phase']}'")
PY
else
  tail -n 20 "$log_dir/train.log"
  echo "device_check: zerotrain train on cuda FAILED"
  status=1
fi

echo "== bench_gpt_step --cuda (GPT-2 small, vocabulary 50304, seq 1024, micro-batch 8, bf16)"
if ! timeout 180 build/default/bench/bench_gpt_step --cuda; then
  echo "device_check: bench_gpt_step --cuda FAILED"
  status=1
fi

if ((status != 0)); then
  echo "device_check: FAILED"
  exit 1
fi
echo "device_check: ok"
