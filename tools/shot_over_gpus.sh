#!/usr/bin/env bash
# A migration whose source wavefield does not fit one GPU runs on two (issue 11): one
# shot of the 3D dome (400 x 400 x 300 at 10 m, 2.5 s) imaged every 3 steps, so that
# its snapshots (about 200 GB) exceed one GPU's memory:
#   1. one rank, migration.storage snapshots: refused before any shot, the refusal
#      naming the GPUs the shot needs (parallel.ranks-per-shot);
#   2. mpirun -np 2, parallel.ranks-per-shot 2, snapshots: each GPU keeps its slab's
#      share of them;
#   3. one rank, storage checkpoints (recomputation) on one GPU;
# and the images of 2 and 3 compared byte for byte (snapshots and checkpoints give the
# same image: README, "Memory"). Exits non-zero when any of that does not hold.
# Run on a 2-GPU machine from the repository root with rtm and make_models staged in
# .device (tools/gpu_stage.sh).   OUT=<folder for the logs> tools/shot_over_gpus.sh
set -uo pipefail
D=$PWD/.device
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/rtm-shot-over-gpus}
W=/tmp/rtm-shot-over-gpus-work
rm -rf "$W"; mkdir -p "$W" "$OUT"
MPI=(mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH)
rc=0
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; date -u
"$D/make_models" --dome 400 400 300 10 "$W/dome.segy" > "$OUT/make_models.log" 2>&1 || { echo "make_models FAILED"; exit 1; }
m="--model.vp $W/dome.segy --wavelet.ricker-f0 15"
"$D/rtm" model $m --acquisition.source-x0 2000 --acquisition.source-y0 2000 --acquisition.source-depth 10 \
    --acquisition.receiver-x0 0 --acquisition.receiver-dx 28 --acquisition.receiver-nx 142 \
    --acquisition.receiver-y0 0 --acquisition.receiver-dy 28 --acquisition.receiver-ny 142 --acquisition.receiver-depth 10 \
    --acquisition.record-length 2.5 --acquisition.record-dt 0.002 --output.shots "$W/shot.sgy" > "$OUT/model.log" 2>&1 ||
    { echo "rtm model FAILED: $(tail -2 "$OUT/model.log")"; exit 1; }
job="migrate $m --data.shots $W/shot.sgy --migration.image-every 3"

# 1. One GPU, snapshots: refused, naming the ranks per shot that hold it.
"$D/rtm" $job --migration.storage snapshots --output.job "$W/one_snap" > "$OUT/one_gpu_snapshots.log" 2>&1
code=$?
echo "1 GPU, snapshots: exit $code: $(grep -m1 -E "\] error" "$OUT/one_gpu_snapshots.log" | cut -c1-600)"
if [ $code -eq 0 ] || ! grep -q "parallel.ranks-per-shot = 2" "$OUT/one_gpu_snapshots.log"; then
    echo "FAILED: one GPU should refuse the snapshots and name parallel.ranks-per-shot = 2"; rc=1
fi
# 2. Two GPUs, snapshots in slabs.
t0=$(date +%s%N)
"${MPI[@]}" -np 2 "$D/rtm" $job --migration.storage snapshots --parallel.ranks-per-shot 2 --output.job "$W/two_snap" \
    > "$OUT/two_gpus_snapshots.log" 2>&1 || { echo "2 GPUs, snapshots FAILED: $(tail -3 "$OUT/two_gpus_snapshots.log")"; rc=1; }
t1=$(date +%s%N)
echo "2 GPUs, snapshots: $(( (t1 - t0) / 1000000 )) ms wall"
# 3. One GPU, checkpoints (auto would take the boundary band here, whose image differs
# by its rounding).
t0=$(date +%s%N)
"$D/rtm" $job --migration.storage checkpoints --output.job "$W/one_ckpt" > "$OUT/one_gpu_checkpoints.log" 2>&1 ||
    { echo "1 GPU, checkpoints FAILED: $(tail -3 "$OUT/one_gpu_checkpoints.log")"; rc=1; }
t1=$(date +%s%N)
echo "1 GPU, checkpoints: $(( (t1 - t0) / 1000000 )) ms wall"
grep -h -E "source wavefield by|migrated [0-9]+ shots" "$OUT/two_gpus_snapshots.log" "$OUT/one_gpu_checkpoints.log" |
    sed 's/.*info /    /' | cut -c1-300
if cmp -s "$W/two_snap/image.sgy" "$W/one_ckpt/image.sgy" && cmp -s "$W/two_snap/illumination.sgy" "$W/one_ckpt/illumination.sgy"; then
    echo "images and illuminations, 2 GPUs (snapshots) and 1 GPU (checkpoints): identical"
else
    echo "FAILED: images or illuminations of 2 GPUs and 1 GPU differ"; rc=1
fi
exit $rc
