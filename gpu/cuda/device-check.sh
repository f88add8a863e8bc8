#!/usr/bin/env bash
# gpu/cuda/device-check.sh: builds the CUDA backend and its tests only, and runs them on
# this machine's NVIDIA GPU(s): the contract of rig/gpu/gpu.hpp, the CUDA-specific tests,
# and Cuda.OneGibUploadChecksumDownload (1 GiB uploaded, checksummed on the GPU, filled and
# downloaded). Meant for a machine lent with a GPU; it should finish in well under five
# minutes (most of it the one nvcc translation unit with Thrust, ~20 s per architecture).
#
#   gpu/cuda/device-check.sh            # build dir build/device-check, sm_90 (H100/H200)
#   ARCH=80 gpu/cuda/device-check.sh    # another architecture (A100)
#
# Exit status: ctest's (0: all passed or skipped). Tests that need two GPUs are skipped on
# a machine with one.
set -euo pipefail
cd "$(dirname "$0")/../.."

[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc >/dev/null || { echo "device-check: no nvcc on PATH" >&2; exit 2; }
build="${BUILD:-build/device-check}"
arch="${ARCH:-90}"
jobs="$(nproc)"

echo "== GPUs"
nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
nvidia-smi --query-gpu=name,pci.bus_id,memory.total,driver_version --format=csv 2>/dev/null || true

echo "== configure (CUDA only, sm_${arch})"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWITH_HIP=OFF -DRIG_BENCH=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 2; }
grep "rig: CUDA backend" "$build.configure.log"

echo "== build rig_gpu_cuda_test"
time cmake --build "$build" --target rig_gpu_cuda_test -j"$jobs"

echo "== run"
# Only the CUDA executable is built: -R keeps ctest to its tests ("Cuda/Contract.*",
# "Cuda.*"), leaving out the placeholders of executables not built.
time ctest --test-dir "$build" -R '^Cuda' --output-on-failure --timeout 240 -j1
