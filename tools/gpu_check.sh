#!/usr/bin/env bash
# One device call: GPU tests, then the benchmarks (`rtm bench`), then a short table
# (printed last). Run on the GPU machine from the repository root with the binaries
# staged in .device/ (tools/gpu_stage.sh builds and stages them here). Writes logs and
# JSON under $OUT.
# Usage: tools/gpu_check.sh [quick|full]   quick: no ncu; full: ncu counters too
set -u
OUT=${OUT:-/tmp/rtm-gpu-check}
mkdir -p "$OUT"
D=$PWD/.device
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
B="$D/rtm bench"
LOG=$OUT/bench.txt
: > "$LOG"

echo "== device"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$LOG"
date -u | tee -a "$LOG"
if command -v cuobjdump > /dev/null; then
    echo "machine code in rtm: $(cuobjdump --list-elf "$D/rtm" | grep -o 'sm_[0-9a-z]*' | sort | uniq -c | tr '\n' ' ')"
fi

echo "== GPU tests"
( time "$D/test_gpu" --reporter compact ) > "$OUT/tests.log" 2>&1
test_rc=$?
grep -E "SKIPPED|analytic error|C-PML on the GPU|rebuild|failed|FAILED|passed|real" "$OUT/tests.log" | tail -25
echo "tests exit code: $test_rc"

run() {  # run <json name> <bench args...>
    local name=$1; shift
    echo "== rtm bench $*" | tee -a "$LOG"
    timeout 240 $B "$@" --json "$OUT/$name.json" 2>&1 | tee -a "$LOG" | tail -n +5
}
run full      --mode full      --grid 512x512x512 --variant all --steps 40
run stencil   --mode stencil   --grid 512x512x512 --variant all --steps 40
run modelling --mode modelling --grid 512x512x512 --steps 20 --repeats 3 \
    --variant q32x8+nosplit,q32x8,q32x16,q32x8r2,q32x8r4,q32x4r4
run damping   --mode modelling --boundary damping --grid 512x512x512 --steps 20 --repeats 3 \
    --variant q32x8+nosplit,q32x8,q32x8r4
run full2d    --mode full      --grid 16384x8192  --variant naive,q32x16,a32x16 --steps 40

if command -v ncu > /dev/null && [ "${1:-}" = full ]; then
    echo "== ncu: one modelling step (512^3, q32x8): time and DRAM bytes per kernel"
    timeout 150 ncu --clock-control none -k regex:"psi_kernel|queue_kernel|sample_kernel|inject_kernel" -c 7 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        $B --mode modelling --grid 512x512x512 --variant q32x8 --steps 1 --repeats 1 > "$OUT/ncu_modelling.txt" 2>&1
    grep -E "^  [a-z_]+.*\(|dram__|gpu__time" "$OUT/ncu_modelling.txt" | sed -E 's/\(rtm::kernels::StepArgs.*//'
fi

echo "== summary (ratio = Gpoints/s over copy-bandwidth ceiling / minimal bytes per point)"
grep -E "^ceiling|^(full|stencil|modelling) " "$LOG" | awk '{ if ($1=="ceiling:") print; else printf "%-10s %-14s %-15s %8s Gpts/s %7s GB/s  %s\n", $1, $2, $4, $6, $7, $10 }'
echo "tests exit code: $test_rc"
