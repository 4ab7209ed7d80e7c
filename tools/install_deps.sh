#!/usr/bin/env bash
# Installs the Debian packages rtm builds and runs with. Quick and silent when
# everything is already there; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libsegyio-dev segyio-bin            # SEG-Y I/O (C library) and segyio-catb for cross-checks
  libboost-program-options-dev        # command line and INI configuration
  libspdlog-dev libfmt-dev            # logging
  nlohmann-json3-dev                  # job state and benchmark reports
  libpng-dev                          # PNG previews
  libfreetype-dev fonts-dejavu-core   # the previews' labels (text through FreeType, DejaVu Sans)
  libxxhash-dev                       # content hashes of a job's inputs (resume fingerprint)
  libfftw3-dev                        # time-dispersion transforms
  catch2                              # tests
  libopenmpi-dev openmpi-bin          # shots over ranks, slabs over GPUs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install_deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
