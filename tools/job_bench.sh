#!/usr/bin/env bash
# Whole jobs against their kernels (issue 12): each command's own summary line (wall
# time, time in propagation steps, GPU busy, Mpoints/s) for
#   2D Marmousi, 16 shots (SHOTS2D=n: n shots over the same 9 km): model, migrate on the
#   GPU, migrate on the CPU cores (CPU=0: not);
#   3D dome 400 x 400 x 300, 4 shots: model, migrate with the default (auto) memory
#   budget, migrate with migration.memory-budget 4 (GB);
#   tti (issue 13): one TTI shot through a 3D dome 256 x 256 x 200 (epsilon 0.2, delta
#   0.1, tilt 30, azimuth 20 degrees), modelled, then migrated with snapshots: the
#   migration's propagation time over the modelling's (target <= 2.5).
# Run on a GPU machine from the repository root with rtm and make_models staged in
# .device (tools/gpu_stage.sh) and .device/data/marmousi.segy.   tools/job_bench.sh [2d|3d|both|tti]
set -uo pipefail
WHAT=${1:-both}
D=$PWD/.device
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/rtm-job-bench}
W=/tmp/rtm-job-bench-work
rm -rf "$W"; mkdir -p "$W" "$OUT"
rc=0
step() {  # step <name> <rtm args...>: the command's summary lines
    local name=$1; shift
    RTM_TIMELINE="$OUT/$name.timeline.json" "$D/rtm" "$@" > "$OUT/$name.log" 2>&1 || { echo "$name FAILED: $(tail -2 "$OUT/$name.log")"; rc=1; }
    echo "$name: $(grep -E "done: [0-9]+ shots?, grid|migrated [0-9]+ shots? in this run" "$OUT/$name.log" | sed 's/.*info //' | tail -1)"
    echo "    $(grep -E "time by phase" "$OUT/$name.log" | sed "s/.*info //" | tail -1)"
    grep -m1 -E "source wavefield by" "$OUT/$name.log" | sed 's/.*info /    /' | cut -c1-220
}
nvidia-smi --query-gpu=name --format=csv,noheader; date -u
if [ "$WHAT" = 2d ] || [ "$WHAT" = both ]; then
    m2="--model.vp $D/data/marmousi.segy"
    n2=${SHOTS2D:-16}
    a2="--acquisition.source-x0 1000 --acquisition.source-dx $(awk -v n="$n2" 'BEGIN {print 9000 / (n - 1)}') --acquisition.source-nx $n2 --acquisition.source-depth 10
        --acquisition.receiver-x0 0 --acquisition.receiver-dx 30 --acquisition.receiver-nx 401 --acquisition.receiver-depth 10
        --acquisition.record-length 4 --acquisition.record-dt 0.002 --wavelet.ricker-f0 15"
    step 2d_model model $m2 $a2 --output.shots "$W/2d.sgy"
    step 2d_migrate_gpu migrate $m2 --data.shots "$W/2d.sgy" --wavelet.ricker-f0 15 --output.job "$W/2d_gpu"
    [ "${CPU:-1}" = 0 ] || step 2d_migrate_cpu migrate $m2 --data.shots "$W/2d.sgy" --wavelet.ricker-f0 15 --propagation.device cpu --output.job "$W/2d_cpu"
fi
if [ "$WHAT" = 3d ] || [ "$WHAT" = both ]; then
    "$D/make_models" --dome 400 400 300 10 "$W/dome.segy" || rc=1
    m3="--model.vp $W/dome.segy"
    a3="--acquisition.source-x0 1300 --acquisition.source-dx 1400 --acquisition.source-nx 2
        --acquisition.source-y0 1300 --acquisition.source-dy 1400 --acquisition.source-ny 2 --acquisition.source-depth 10
        --acquisition.receiver-x0 0 --acquisition.receiver-dx 28 --acquisition.receiver-nx 142
        --acquisition.receiver-y0 0 --acquisition.receiver-dy 28 --acquisition.receiver-ny 142 --acquisition.receiver-depth 10
        --acquisition.record-length 2.5 --acquisition.record-dt 0.002 --wavelet.ricker-f0 15"
    step 3d_model model $m3 $a3 --output.shots "$W/3d.sgy"
    step 3d_migrate_auto migrate $m3 --data.shots "$W/3d.sgy" --wavelet.ricker-f0 15 --output.job "$W/3d_auto"
    step 3d_migrate_4GB migrate $m3 --data.shots "$W/3d.sgy" --wavelet.ricker-f0 15 --migration.memory-budget 4 --output.job "$W/3d_4"
    cmp -s "$W/3d_auto/image.sgy" "$W/3d_4/image.sgy" && echo "3D images, auto budget and 4 GB: identical" ||
        echo "3D images, auto budget and 4 GB: differ"
fi
if [ "$WHAT" = tti ]; then
    "$D/make_models" --dome 256 256 200 10 "$W/dome_tti.segy" || rc=1
    mt="--model.vp $W/dome_tti.segy --model.epsilon 0.2 --model.delta 0.1 --model.theta 30 --model.phi 20"
    at="--acquisition.source-x0 1280 --acquisition.source-y0 1280 --acquisition.source-depth 20
        --acquisition.receiver-x0 0 --acquisition.receiver-dx 40 --acquisition.receiver-nx 64
        --acquisition.receiver-y0 0 --acquisition.receiver-dy 40 --acquisition.receiver-ny 64 --acquisition.receiver-depth 20
        --acquisition.record-length 1.5 --acquisition.record-dt 0.002 --wavelet.ricker-f0 15"
    step tti_model model $mt $at --output.shots "$W/tti.sgy"
    step tti_migrate migrate $mt --data.shots "$W/tti.sgy" --wavelet.ricker-f0 15 --migration.storage snapshots --output.job "$W/tti_mig"
    steps() { grep -oE "[0-9.]+ s in propagation steps" "$OUT/$1.log" | tail -1 | cut -d' ' -f1; }
    awk -v m="$(steps tti_model)" -v r="$(steps tti_migrate)" \
        'BEGIN { if (m > 0) printf "TTI RTM shot / forward propagation (propagation steps): %.2f (%s s / %s s)\n", r / m, r, m }'
fi
exit $rc
