#!/usr/bin/env bash
# Builds the GPU test and bench binaries here (nvcc, sm_90) and stages them, with the
# shared libraries the device machine lacks, in .device/ (git-ignored) for the device
# tool's `carry: [".device"]`. Then: run `tools/gpu_check.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
cmake -S . -B "$BUILD" -G Ninja > /dev/null
cmake --build "$BUILD" --target test_gpu rtm_bench_main
mkdir -p .device/lib
cp "$BUILD/tests/gpu/test_gpu" "$BUILD/src/bench/rtm-bench" .device/
for lib in $(ldd .device/test_gpu .device/rtm-bench | awk '/=> \// {print $3}' | sort -u); do
    case "$lib" in
        */libboost_*|*/libspdlog*|*/libfmt*|*/libsegyio*|*/libpng*) cp "$lib" .device/lib/ ;;
    esac
done
ls -la .device .device/lib
