#!/usr/bin/env bash
# Installs the dependencies and builds ttap into build/ (binary: build/ttap).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > /dev/null
# Two jobs: a translation unit that includes libtorch needs about 0.7 GiB to compile.
ninja -C build -j "${TTAP_JOBS:-2}"
