#!/usr/bin/env bash
# The main job on the bundled data, from a fresh clone: set up, build, model the
# bundled 2D shots, and leave SEG-Y and PNG previews in out/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
mkdir -p out
build/rtm info velocity_models/layers2d_vp.segy
build/rtm model --config shots/layers2d.ini --output.shots out/layers2d_shots.sgy
build/rtm info out/layers2d_shots.sgy
echo
echo "Done: out/layers2d_shots.sgy (8 shot gathers) and out/layers2d_shots.png (the middle gather)."
