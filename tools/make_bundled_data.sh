#!/usr/bin/env bash
# Regenerates the committed bundled data: velocity_models/ by the generator,
# shots/ by `rtm model` from those models.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build/tools/make_models velocity_models
build/rtm model --config shots/layers2d.ini --propagation.device cpu
