#!/usr/bin/env bash
# Builds rtm and its tests here (nvcc, sm_90) and stages them, with the shared
# libraries the device machine lacks (ldd decides), in .device/ (git-ignored) for the
# device tool's `carry: [".device"]`: rtm itself, and a slim copy of the build tree
# (the test executables and CTest's files, no objects) in .device/build-gpu, so that
# the GPU machine runs the GPU tests through CTest's label (ctest -L gpu). Then run
# `tools/gpu_check.sh` there.
# SRC=dir builds another checkout (e.g. a clean worktree) and stages into this one.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-$PWD}
BUILD=${BUILD:-$SRC/build-gpu}
# Explicit: a build folder configured before the top-level default keeps its cached arch.
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null
cmake --build "$BUILD"
# The kernels must carry sm_90 machine code (not only PTX for the driver to compile):
# the build's nvcc flags here; cuobjdump --list-elf on the device (gpu_check.sh).
grep -q "code=\[compute_90,sm_90\]" "$BUILD/build.ninja" ||
    { echo "$BUILD does not build sm_90 code" >&2; exit 1; }
rm -rf .device
mkdir -p .device/lib .device/build-gpu
cp "$BUILD/rtm" "$BUILD/tools/make_models" .device/
# The Marmousi model for tools/scaling_mpi.sh, when the shared data are here.
marmousi="$SRC/../shared/data/models/marmousi_vp_nx1601_nz401_d7.5m_ms.segy"
[ -f "$marmousi" ] && install -D -m 644 "$marmousi" .device/data/marmousi.segy
# The build tree's test files (absolute paths into $BUILD, which gpu_check.sh links on
# the device) and the executables of the tests labelled gpu.
(cd "$BUILD" && find . -name 'CTestTestfile.cmake' -o -name '*_tests-*.cmake' -o -name '*_include-*.cmake') |
    while read -r f; do install -D -m 644 "$BUILD/$f" ".device/build-gpu/$f"; done
# Where the tests look for the sources and their build tree: gpu_check.sh links both there.
printf 'SRC=%s\nBUILD=%s\n' "$(realpath "$SRC")" "$(realpath "$BUILD")" > .device/paths
ln -sf ../rtm .device/build-gpu/rtm  # one copy: the device call carries 64 MiB at most
gpu_bins=$(grep -rlE 'LABELS "?gpu' .device/build-gpu --include='*_tests-*.cmake' | sed -E 's|.*/([a-z_]+)_tests-.*|\1|' | sort -u)
for t in $gpu_bins; do
    bin=$(cd "$BUILD" && find . -type f -name "$t" -perm -u+x | head -1)
    mkdir -p ".device/build-gpu/$(dirname "$bin")"
    cp "$BUILD/$bin" ".device/build-gpu/$bin"
done
echo "staged test executables: $gpu_bins"
# Open MPI (libmpi.so.40) is not staged: the device's own, of the same ABI, runs the ranks.
for lib in $(ldd .device/rtm .device/make_models .device/build-gpu/tests/*/* 2>/dev/null | awk '/=> \// {print $3}' | sort -u); do
    case "$lib" in
        */libboost_*|*/libspdlog*|*/libfmt*|*/libsegyio*|*/libpng*|*/libgomp*|*/libxxhash*|*/libfftw3*|*/libfreetype*|*/libbrotli*|*/libbz2*) cp "$lib" .device/lib/ ;;
    esac
done
# REF_CPU_JOB=<job folder of `rtm migrate --config shots/layers2d_migrate.ini
# --migration.normalise false --migration.laplacian false --propagation.device cpu`>
# stages its image and illumination for gpu_check.sh's comparison too.
if [ -n "${REF_CPU_JOB:-}" ]; then
    mkdir -p .device/ref_cpu_job
    cp "$REF_CPU_JOB"/image.sgy "$REF_CPU_JOB"/illumination.sgy .device/ref_cpu_job/
fi
ls -la .device .device/lib
du -sh .device
