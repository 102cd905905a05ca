#!/usr/bin/env bash
# Installs the dependencies, builds ttap and its tests, and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh -DTTAP_BUILD_TESTS=ON
ctest --test-dir build --output-on-failure -j "${TTAP_JOBS:-2}"
