#!/usr/bin/env bash
# One device call: GPU tests, then benchmarks (`rtm bench`), then a short table
# (printed last). Run on the GPU machine from the repository root with the binaries
# staged in .device/ (tools/gpu_stage.sh builds and stages them here). Writes logs and
# JSON under $OUT. Exits non-zero when any test, bench or comparison failed (the list
# of failures is printed last).
# Usage: tools/gpu_check.sh [tests|rtm|quick|full|batch|final]
#   tests: the GPU tests only (TESTS=regex: those whose names match it, CTest's -R, which
#          is case-sensitive: the TTI kernels' tests match "TTI", not "tti"; a regex that
#          matches no test fails).
# The GPU tests run through CTest's label (ctest -L gpu) on the staged build tree, as
# they would on a workstation with a GPU.
#   rtm   (default): the GPU tests; `rtm bench --mode rtm` on a 2D and a 3D grid (one RTM
#         shot against one forward propagation); `rtm migrate` of the bundled shots on
#         the GPU and on the CPU, and the two image.sgy compared (relative L2, fp32).
#   quick: test_gpu and the kernel benchmarks (full, stencil, modelling); full: + ncu.
#   batch: test_gpu and 2D batches of shots (full update and modelling steps, 2001x601).
#   final: rtm, then the default and the best variants of each kernel benchmark, ncu
#         on one 3D modelling step, and on a machine of several GPUs one shot over all
#         of them in z-slabs (`rtm bench --mode slabs`; the figures docs/performance.md quotes).
set -u -o pipefail
cd "$(dirname "$0")/.."
FAILURES=()
failed() { FAILURES+=("$*"); echo "FAILED: $*"; }
finish() {
    echo "== result"
    if [ ${#FAILURES[@]} -eq 0 ]; then echo "gpu_check $MODE: everything passed"; exit 0; fi
    printf 'gpu_check %s: %d failure(s):\n' "$MODE" ${#FAILURES[@]}; printf '  %s\n' "${FAILURES[@]}"
    exit 1
}
MODE=${1:-rtm}
case "$MODE" in tests|rtm|quick|full|batch|final) ;; *) echo "unknown mode '$MODE': use tests, rtm, quick, full, batch or final" >&2; exit 2 ;; esac
OUT=${OUT:-/tmp/rtm-gpu-check}
mkdir -p "$OUT"
D=$PWD/.device
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
B=("$D/rtm" bench)
LOG=$OUT/bench.txt
: > "$LOG"

echo "== device"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$LOG"
date -u | tee -a "$LOG"
if command -v cuobjdump > /dev/null; then
    echo "machine code in rtm: $(cuobjdump --list-elf "$D/rtm" | grep -o 'sm_[0-9a-z]*' | sort | uniq -c | tr '\n' ' ')"
fi

echo "== GPU tests (ctest -L gpu)"
# The staged build tree keeps the build machine's absolute paths (the test list, the
# source folder the tests read, .device/paths): link them to this checkout.
. "$D/paths"
for link in "$SRC:$PWD" "$BUILD:$D/build-gpu"; do
    at=${link%%:*} to=${link#*:}
    [ "$(realpath "$at" 2> /dev/null)" = "$(realpath "$to")" ] || { mkdir -p "$(dirname "$at")"; ln -sfn "$to" "$at"; }
done
( time timeout 420 ctest --test-dir "$BUILD" -L gpu --no-tests=error ${TESTS:+-R "$TESTS"} --output-on-failure --timeout 300 ) > "$OUT/tests.log" 2>&1
test_rc=$?
grep -E "SKIPPED|tests passed|tests failed|\*\*\*Failed|Not Run|\(Skipped\)|^real" "$OUT/tests.log" | tail -30
echo "tests exit code: $test_rc"
[ "$test_rc" = 0 ] || failed "GPU tests (ctest -L gpu, exit code $test_rc; $OUT/tests.log)"
# Every GPU test must have run: a skip on the GPU machine means the GPU was not used.
grep -q "(Skipped)" "$OUT/tests.log" && failed "GPU tests skipped on the GPU machine (see $OUT/tests.log)"
[ "$MODE" = tests ] && finish

run() {  # run <json name> <bench args...>
    local name=$1; shift
    echo "== rtm bench $*" | tee -a "$LOG"
    timeout 240 "${B[@]}" "$@" --json "$OUT/$name.json" 2>&1 | tee -a "$LOG" | grep -v "\] info" | tail -n +2
    local rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || failed "rtm bench $* (exit code $rc)"
}

# Relative L2 of two SEG-Y files' samples (IEEE or IBM floats, any trace count),
# plain python3 (no numpy, no segyio on the device).
compare_sgy() {
    python3 - "$1" "$2" <<'EOF'
import struct, sys, math
def read(path):
    b = open(path, 'rb').read()
    ns, fmt = struct.unpack('>hh', b[3220:3222] + b[3224:3226])
    ext = struct.unpack('>h', b[3504:3506])[0] if len(b) > 3506 else 0
    off = 3600 + 3200 * max(ext, 0)
    vals = []
    while off + 240 <= len(b):
        n = struct.unpack('>H', b[off + 114:off + 116])[0] or ns
        raw = b[off + 240:off + 240 + 4 * n]
        if fmt == 5:
            vals.extend(struct.unpack('>%df' % n, raw))
        else:  # IBM float
            for (w,) in struct.iter_unpack('>I', raw):
                s = -1.0 if w >> 31 else 1.0
                e = (w >> 24) & 0x7f
                m = (w & 0xffffff) / float(1 << 24)
                vals.append(s * m * 16.0 ** (e - 64))
        off += 240 + 4 * n
    return vals
a, b = read(sys.argv[1]), read(sys.argv[2])
if len(a) != len(b) or not a:
    print("image comparison: sizes differ (%d vs %d samples)" % (len(a), len(b))); sys.exit(1)
num = sum((x - y) ** 2 for x, y in zip(a, b)); den = sum(y * y for y in b)
rel = math.sqrt(num / den) if den > 0 else float('inf')
peak = max(abs(y) for y in b)
maxd = max(abs(x - y) for x, y in zip(a, b))
print("image comparison (%s vs %s): %d samples, relative L2 %.3g, max |diff| %.3g of peak %.3g" %
      ('/'.join(sys.argv[1].split('/')[-2:]), '/'.join(sys.argv[2].split('/')[-2:]), len(a), rel, maxd, peak))
# fp32 propagation on both sides, summed over shots: same bound as test_gpu's
# migrate_shot comparison (1e-4).
sys.exit(0 if rel <= 1e-4 and not math.isnan(rel) else 2)
EOF
}

if [ "$MODE" = rtm ] || [ "$MODE" = final ]; then
    run rtm2d --mode rtm --grid 2001x601 --steps 3000 --repeats 3
    run rtm3d --mode rtm --grid 256x256x256 --steps 600 --repeats 3
    # Job folders under /tmp (only the images come back in $OUT). The CPU run is
    # limited to ${CPU_LIMIT:-200} s; .device/ref_cpu_job (when staged) holds the CPU
    # job of the same binary and config made on the build machine, compared too.
    echo "== rtm migrate (bundled shots), GPU and CPU"
    J=/tmp/rtm_jobs; rm -rf "$J"; mkdir -p "$J"
    for dev in gpu cpu; do
        lim=240; [ $dev = cpu ] && lim=${CPU_LIMIT:-200}
        start=$(date +%s%N)
        # The raw stack as the image (no normalisation, no Laplacian: these would
        # amplify the fp32 differences that the bound allows), and the illumination.
        timeout $lim "$D/rtm" migrate --config shots/layers2d_migrate.ini --migration.normalise false \
            --migration.laplacian false --propagation.device $dev --output.job "$J/${dev}_job" > "$OUT/migrate_$dev.log" 2>&1
        rc=$?
        [ "$rc" = 0 ] || failed "rtm migrate on the $dev (exit code $rc; $OUT/migrate_$dev.log)"
        echo "$dev migrate exit code: $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms wall; $(grep -m1 'info device' "$OUT/migrate_$dev.log" | sed 's/.*info //')"
        grep -E "shot 1 \(|error" "$OUT/migrate_$dev.log" | head -3
    done
    cp "$J/gpu_job/image.sgy" "$OUT/image_gpu.sgy" 2> /dev/null
    cmp_rc=9
    if [ -f "$J/cpu_job/image.sgy" ]; then
        cp "$J/cpu_job/image.sgy" "$OUT/image_cpu.sgy"
        compare_sgy "$J/gpu_job/image.sgy" "$J/cpu_job/image.sgy" &&
            compare_sgy "$J/gpu_job/illumination.sgy" "$J/cpu_job/illumination.sgy"; cmp_rc=$?
    fi
    if [ -d "$D/ref_cpu_job" ]; then
        compare_sgy "$J/gpu_job/image.sgy" "$D/ref_cpu_job/image.sgy" &&
            compare_sgy "$J/gpu_job/illumination.sgy" "$D/ref_cpu_job/illumination.sgy"; r=$?
        [ "$cmp_rc" = 9 ] && cmp_rc=$r
    fi
    echo "== summary"
    grep -E "RTM shot|forward: model_shots|^steps N|^rtm shot" "$LOG"
    echo "image comparison exit code: $cmp_rc"
    [ "$cmp_rc" = 0 ] || failed "GPU and CPU images differ beyond the fp32 bound, or no CPU image to compare (code $cmp_rc)"
    echo "tests exit code: $test_rc"
    [ "$MODE" = rtm ] && finish
fi

if [ "$MODE" = final ]; then
    run full      --mode full      --grid 512x512x512 --variant q32x16,t32x16,t32x8,t32x8s6,t32x32v4 --steps 40
    run stencil   --mode stencil   --grid 512x512x512 --variant q32x8,t32x16,t32x8,t32x32v4 --steps 40
    run modelling --mode modelling --grid 512x512x512 --steps 20 --repeats 3 --variant q32x8,t32x16,t32x8
    run damping   --mode modelling --boundary damping --grid 512x512x512 --steps 20 --repeats 3 --variant q32x8,t32x16,t32x8
    run full2d    --mode full      --grid 16384x8192 --variant q32x16,t32x16,t32x8s6 --steps 40
    run full2d_b64 --mode full     --grid 2001x601 --batch 64 --steps 40 --variant q32x16,t32x16,t32x8s6
    run model2d_b64 --mode modelling --grid 2001x601 --batch 64 --steps 20 --repeats 3 --variant t32x16
    run damp2d_b64 --mode modelling --boundary damping --grid 2001x601 --batch 64 --steps 20 --repeats 3 --variant t32x16
fi

if [ "$MODE" = batch ]; then
    for b in 1 8 32 64; do run full2d_b$b --mode full --grid 2001x601 --batch $b --steps 40; done
    for b in 1 32 64; do run model2d_b$b --mode modelling --grid 2001x601 --batch $b --steps 20 --repeats 3 --variant q32x16; done
    run damp2d_b64 --mode modelling --boundary damping --grid 2001x601 --batch 64 --steps 20 --repeats 3 --variant q32x16
    echo "== summary (ratio = Gpoints/s over copy-bandwidth ceiling / minimal bytes per point)"
    grep -E "^ceiling|^(full|modelling) " "$LOG" | awk '{ if ($1=="ceiling:") print; else printf "%-10s %-8s %-10s %8s Gpts/s %7s GB/s %4s B/pt %7s  %s %s %s %s\n", $1, $2, $4, $6, $7, $8, $10, $11, $12, $13, $14 }'
    echo "tests exit code: $test_rc"
    finish
fi

if [ "$MODE" = quick ] || [ "$MODE" = full ]; then
run full      --mode full      --grid 512x512x512 --variant all --steps 40
run stencil   --mode stencil   --grid 512x512x512 --variant all --steps 40
run modelling --mode modelling --grid 512x512x512 --steps 20 --repeats 3 \
    --variant q32x8,t32x16,t32x8,t32x8s6
run damping   --mode modelling --boundary damping --grid 512x512x512 --steps 20 --repeats 3 \
    --variant q32x8,t32x16,t32x8,t32x8s6
run full2d    --mode full      --grid 16384x8192  --variant q32x16,t32x16,t32x8s6 --steps 40
run full2d_b64 --mode full     --grid 2001x601 --batch 64 --steps 40 --variant q32x16,t32x16,t32x8s6
run model2d_b64 --mode modelling --grid 2001x601 --batch 64 --steps 20 --repeats 3 --variant q32x16,t32x16,t32x8s6
run damp2d_b64 --mode modelling --boundary damping --grid 2001x601 --batch 64 --steps 20 --repeats 3 \
    --variant q32x16,t32x16,t32x8s6
fi

# One shot over every GPU of the machine in z-slabs, against one GPU (final, 2 GPUs or more).
GPUS=$(nvidia-smi -L | wc -l)
if [ "$MODE" = final ] && [ "$GPUS" -ge 2 ]; then
    echo "== rtm bench --mode slabs over $GPUS GPUs (mpirun)" | tee -a "$LOG"
    timeout 300 mpirun --allow-run-as-root -np "$GPUS" -x LD_LIBRARY_PATH "$D/rtm" bench --mode slabs \
        --grid 512x512x1024 --boundary none,damping,cpml --steps 20 --repeats 5 --json "$OUT/slabs.json" 2>&1 |
        tee -a "$LOG" | grep -v "\] info"
    [ "${PIPESTATUS[0]}" = 0 ] || failed "rtm bench --mode slabs over $GPUS GPUs"
fi

if command -v ncu > /dev/null && { [ "$MODE" = full ] || [ "$MODE" = final ]; }; then
    echo "== ncu: one modelling step (512^3, t32x16): time and DRAM bytes per kernel"
    timeout 150 ncu --clock-control none -k regex:"psi_|queue_kernel|tma_kernel|sample_kernel|inject_kernel" -c 8 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        "${B[@]}" --mode modelling --grid 512x512x512 --variant t32x16 --steps 1 --repeats 1 > "$OUT/ncu_modelling.txt" 2>&1
    grep -E "^  [a-z_]+.*\(|dram__|gpu__time" "$OUT/ncu_modelling.txt" | sed -E 's/\(rtm::kernels::StepArgs.*//'
fi

echo "== summary (ratio = Gpoints/s over copy-bandwidth ceiling / minimal bytes per point)"
grep -E "^ceiling|^(full|stencil|modelling) " "$LOG" | awk '{ if ($1=="ceiling:") print; else printf "%-10s %-14s %-15s %8s Gpts/s %7s GB/s  %s\n", $1, $2, $4, $6, $7, $10 }'
echo "tests exit code: $test_rc"
finish
