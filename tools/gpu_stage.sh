#!/usr/bin/env bash
# Builds the GPU test binary and `rtm` here (nvcc, sm_90) and stages them, with the
# shared libraries the device machine lacks (ldd decides), in .device/ (git-ignored)
# for the device tool's `carry: [".device"]`. Then run `tools/gpu_check.sh` there.
# SRC=dir builds another checkout (e.g. a clean worktree) and stages into this one.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-$PWD}
BUILD=${BUILD:-$SRC/build-gpu}
# Explicit: a build folder configured before the top-level default keeps its cached arch.
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null
cmake --build "$BUILD" --target test_gpu rtm
# The kernels must carry sm_90 machine code (not only PTX for the driver to compile):
# the build's nvcc flags here; cuobjdump --list-elf on the device (gpu_check.sh).
grep -q "code=\[compute_90,sm_90\]" "$BUILD/build.ninja" ||
    { echo "$BUILD does not build sm_90 code" >&2; exit 1; }
rm -rf .device
mkdir -p .device/lib
cp "$BUILD/tests/gpu/test_gpu" "$BUILD/rtm" .device/
for lib in $(ldd .device/test_gpu .device/rtm | awk '/=> \// {print $3}' | sort -u); do
    case "$lib" in
        */libboost_*|*/libspdlog*|*/libfmt*|*/libsegyio*|*/libpng*|*/libgomp*|*/libfftw3*) cp "$lib" .device/lib/ ;;
    esac
done
# REF_CPU_JOB=<job folder of `rtm migrate --config shots/layers2d_migrate.ini
# --propagation.device cpu`> stages its images for gpu_check.sh's comparison too.
if [ -n "${REF_CPU_JOB:-}" ]; then
    mkdir -p .device/ref_cpu_job
    cp "$REF_CPU_JOB"/image.sgy "$REF_CPU_JOB"/stack-*-image.bin .device/ref_cpu_job/
fi
ls -la .device .device/lib
du -sh .device
