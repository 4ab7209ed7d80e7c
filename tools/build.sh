#!/usr/bin/env bash
# Installs what rtm needs (Debian packages) and builds it into build/ (Release):
# everything, or the targets given (tools/build.sh rtm). The CUDA backend is built
# when nvcc is found (/usr/local/cuda/bin or PATH) at the first configure.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f build/CMakeCache.txt ] || cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --parallel "$(nproc)" ${1:+--target "$@"}
