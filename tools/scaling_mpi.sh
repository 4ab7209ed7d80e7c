#!/usr/bin/env bash
# Shots per hour of a migration on 1 GPU and on N GPUs (mpirun, one rank per GPU), in
# one run, for a 2D Marmousi survey and a 3D dome survey (issue 10's targets); the
# images must be the same bit for bit. Run on a GPU machine from the repository root,
# with rtm and make_models staged in .device (tools/gpu_stage.sh) and the Marmousi model
# at .device/data/marmousi.segy (../shared/data/models/marmousi_vp_nx1601_nz401_d7.5m_ms.segy).
#   tools/scaling_mpi.sh N [2d|3d|both]
# SHOTS2D (default 64) and SHOTS3D (default 8, even: two lines of sources) set the
# surveys' sizes: fixed start and end costs weigh less in larger ones.
# Prints a table; exits non-zero when a run fails or the images differ.
set -uo pipefail
N=${1:?usage: tools/scaling_mpi.sh N [2d|3d|both]}
WHAT=${2:-both}
D=$PWD/.device
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/rtm-scaling}
W=/tmp/rtm-scaling-work
rm -rf "$W"; mkdir -p "$W" "$OUT"
MPI=(mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH)
rc=0
table=()

# seconds of a command's wall time; its log in $OUT/<name>.log
timed() {
    local name=$1; shift
    local t0=$(date +%s.%N)
    "$@" > "$OUT/$name.log" 2>&1
    local r=$?
    local t1=$(date +%s.%N)
    [ $r = 0 ] || { echo "FAILED ($r): $*" >&2; tail -5 "$OUT/$name.log" >&2; rc=1; }
    python3 -c "print(round($t1 - $t0, 2))"
}

survey() {  # survey <name> <model> <model args...> -- <migrate args...>
    local name=$1 model=$2; shift 2
    local margs=() gargs=()
    while [ "$1" != "--" ]; do margs+=("$1"); shift; done; shift
    gargs=("$@")
    # (the shots are modelled over the N GPUs: data preparation, not the measurement)
    local tm=$(timed ${name}_model "${MPI[@]}" -np "$N" "$D/rtm" model --model.vp "$model" "${margs[@]}" --output.shots "$W/$name.sgy")
    local t1=$(timed ${name}_np1 "$D/rtm" migrate --model.vp "$model" --data.shots "$W/$name.sgy" "${gargs[@]}" --output.job "$W/${name}_np1")
    local tn=$(timed ${name}_np$N "${MPI[@]}" -np "$N" "$D/rtm" migrate --model.vp "$model" --data.shots "$W/$name.sgy" "${gargs[@]}" --output.job "$W/${name}_np$N")
    local same=no
    cmp -s "$W/${name}_np1/image.sgy" "$W/${name}_np$N/image.sgy" && cmp -s "$W/${name}_np1/illumination.sgy" "$W/${name}_np$N/illumination.sgy" && same=yes
    [ $same = yes ] || { echo "$name: images differ between 1 and $N ranks" >&2; rc=1; }
    local shots=$(grep -c "done, " "$OUT/${name}_np1.log")
    table+=("$(python3 -c "
s=$shots; t1=$t1; tn=$tn
print('%-4s %5d shots | model (on $N GPUs) %6.1f s | 1 GPU %7.1f s (%6.0f shots/h) | $N GPUs %7.1f s (%6.0f shots/h) | speed-up %.3f | same image: $same' % ('$name', s, $tm, t1, s/t1*3600, tn, s/tn*3600, t1/tn))")")
    grep -h "rank .* on .*: .* shots, migrating" "$OUT/${name}_np$N.log" | sed 's/^.*info /    /'
}

nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
date -u
if [ "$WHAT" != 3d ]; then
    # Marmousi 1601 x 401 at 7.5 m; SHOTS2D shots over 0-11 812.5 m (64: every 187.5 m),
    # 401 receivers every 30 m over the whole line, 3 s records at 2 ms, 15 Hz.
    n2=${SHOTS2D:-64}
    survey 2d "$D/data/marmousi.segy" \
        --acquisition.source-x0 0 --acquisition.source-dx "$(awk -v n="$n2" 'BEGIN { print (n > 1 ? 11812.5 / (n - 1) : 0) }')" \
        --acquisition.source-nx "$n2" --acquisition.source-depth 10 \
        --acquisition.receiver-x0 0 --acquisition.receiver-dx 30 --acquisition.receiver-nx 401 --acquisition.receiver-depth 10 \
        --acquisition.record-length 3 --acquisition.record-dt 0.002 --wavelet.ricker-f0 15 -- \
        --wavelet.ricker-f0 15
fi
if [ "$WHAT" != 2d ]; then
    # Dome 400 x 400 x 300 at 10 m; SHOTS3D shots in two lines (8: 4 x 2, x from 800 to
    # 3200 m), 100 x 100 receivers every 40 m, 2 s records.
    n3=$(( ${SHOTS3D:-8} / 2 ))
    "$D/make_models" --dome 400 400 300 10 "$W/dome.segy" || rc=1
    survey 3d "$W/dome.segy" \
        --acquisition.source-x0 800 --acquisition.source-dx "$(awk -v n="$n3" 'BEGIN { print (n > 1 ? 2400 / (n - 1) : 0) }')" \
        --acquisition.source-nx "$n3" \
        --acquisition.source-y0 1300 --acquisition.source-dy 1400 --acquisition.source-ny 2 --acquisition.source-depth 10 \
        --acquisition.receiver-x0 0 --acquisition.receiver-dx 40 --acquisition.receiver-nx 100 \
        --acquisition.receiver-y0 0 --acquisition.receiver-dy 40 --acquisition.receiver-ny 100 --acquisition.receiver-depth 10 \
        --acquisition.record-length 2 --acquisition.record-dt 0.002 --wavelet.ricker-f0 15 -- \
        --wavelet.ricker-f0 15 --migration.memory-budget 40
fi
echo "== scaling (1 GPU against $N, same binary, same run)"
printf '%s\n' "${table[@]}"
exit $rc
