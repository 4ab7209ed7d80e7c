#!/usr/bin/env bash
# Why anisotropy matters, on the bundled 3D TTI model (velocity_models/aniso3d_*): model
# 9 shots through it, then migrate them twice, with the anisotropic model and with vp
# alone, and leave both images (SEG-Y and PNG slices) in out/aniso3d/{tti,isotropic}/.
# On a GPU it takes seconds; on two CPU cores about 45 minutes (the TTI propagation is
# the slow part). RTM=path runs another rtm binary (and skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${RTM:-}" ]; then
    tools/build.sh rtm
    RTM=build/rtm
fi
mkdir -p out/aniso3d
"$RTM" model --config shots/aniso3d.ini
"$RTM" migrate --config shots/aniso3d_migrate.ini
"$RTM" migrate --config shots/aniso3d_migrate_isotropic.ini
echo
echo "Done: out/aniso3d/tti/image_inline.png (TTI migration) beside"
echo "      out/aniso3d/isotropic/image_inline.png (the same data, vp alone: reflectors too shallow and smeared)."
