#!/usr/bin/env bash
# One device call: GPU tests, then the benchmarks, then a short table (printed last).
# Run on the GPU machine from the repository root with the binaries staged in .device/
# (tools/gpu_stage.sh builds and stages them here). Writes logs and JSON under $OUT.
# Usage: tools/gpu_check.sh [quick]   (quick: tests + one bench per target)
set -u
OUT=${OUT:-/tmp/rtm-gpu-check}
mkdir -p "$OUT"
D=$PWD/.device
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
B=$D/rtm-bench
LOG=$OUT/bench.txt
: > "$LOG"

echo "== device"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$LOG"
date -u | tee -a "$LOG"

echo "== GPU tests"
( time "$D/test_gpu" --reporter compact ) > "$OUT/tests.log" 2>&1
test_rc=$?
grep -E "SKIPPED|analytic error|C-PML on the GPU|failed|FAILED|passed|real" "$OUT/tests.log" | tail -25
echo "tests exit code: $test_rc"

run() {  # run <json name> <bench args...>
    local name=$1; shift
    echo "== rtm-bench $*" | tee -a "$LOG"
    timeout 240 "$B" "$@" --json "$OUT/$name.json" 2>&1 | tee -a "$LOG" | tail -n +5
}
run full      --mode full      --grid 512x512x512 --variant all --steps 40
run stencil   --mode stencil   --grid 512x512x512 --variant all --steps 40
run modelling --mode modelling --grid 512x512x512 --steps 20 --repeats 3 --variant q32x16,q32x8,a32x16,a32x8,a32x8s5
run full2d    --mode full      --grid 16384x8192  --variant naive,q32x16,a32x16 --steps 40

if command -v ncu > /dev/null && [ "${1:-}" != quick ]; then
    echo "== ncu: DRAM bytes of one full step and one stencil step (512^3, q32x16 then a32x16)"
    for m in full stencil; do
        for k in queue_kernel:q32x16 async_kernel:a32x16; do
            timeout 100 ncu --clock-control none -k regex:${k%%:*} -c 1 \
                --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum \
                "$B" --mode $m --grid 512x512x512 --variant ${k##*:} --steps 1 --repeats 1 > "$OUT/ncu_$m.txt" 2>&1
            grep -E "dram__|gpu__time|warps_active|lts__t_bytes|ERR" "$OUT/ncu_$m.txt" | sed "s/^/$m ${k##*:} /"
        done
    done
fi

if command -v ncu > /dev/null && [ "${1:-}" != quick ]; then
    echo "== ncu: one modelling step (512^3, q32x8): time and DRAM bytes per kernel"
    timeout 150 ncu --clock-control none -k regex:"psi_kernel|queue_kernel|sample_kernel|inject_kernel" -c 6 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        "$B" --mode modelling --grid 512x512x512 --variant q32x8 --steps 1 --repeats 1 > "$OUT/ncu_modelling.txt" 2>&1
    grep -E "^  [a-z_]+.*\(|dram__|gpu__time" "$OUT/ncu_modelling.txt" | sed -E 's/\(rtm::kernels::StepArgs.*//'
fi

echo "== summary (ratio = Gpoints/s over copy-bandwidth ceiling / minimal bytes per point)"
grep -E "^ceiling|^(full|stencil|modelling) " "$LOG" | awk '{ if ($1=="ceiling:") print; else printf "%-10s %-12s %-15s %8s Gpts/s %7s GB/s  %s\n", $1, $2, $4, $6, $7, $10 }'
echo "tests exit code: $test_rc"
