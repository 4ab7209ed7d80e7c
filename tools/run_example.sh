#!/usr/bin/env bash
# The main job on the bundled data, from a fresh clone: set up, build, model the
# bundled 2D shots if they are missing, migrate them with the smoothed model, and
# leave the image (SEG-Y and PNG) in out/layers2d_migration/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh rtm
mkdir -p out
if [ ! -f shots/layers2d.sgy ]; then
  build/rtm model --config shots/layers2d.ini
fi
build/rtm info shots/layers2d.sgy
build/rtm migrate --config shots/layers2d_migrate.ini
echo
echo "Done: out/layers2d_migration/image.sgy and image.png (the stacked RTM image),"
echo "      the plan at the top of the log (build/rtm migrate --config shots/layers2d_migrate.ini --dry-run prints it alone)."
