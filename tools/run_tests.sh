#!/usr/bin/env bash
# From a fresh clone: set up, build, and run the whole test suite. GPU tests run
# where a GPU is present and say SKIPPED where not; tests that use the real data in
# ../shared/data say SKIPPED when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
# One test at a time: each uses every core through OpenMP, and OpenMP processes
# sharing cores spin against each other (several times slower than running in turn).
ctest --test-dir build --output-on-failure --timeout 1500
