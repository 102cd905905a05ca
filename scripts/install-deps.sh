#!/usr/bin/env bash
# Installs everything ttap needs to build and test, from Debian bookworm's archive.
# Run as root (or with sudo). Safe to run again: apt skips what is already there.
set -euo pipefail

# libopenblas0-pthread: Debian's torch and libtorch call BLAS through libblas.so.3; without
# OpenBLAS that is the reference BLAS, about 5x slower for the detector's forward and training.
packages=(
  build-essential cmake ninja-build pkg-config git
  libsimdjson-dev libtorch-dev libsentencepiece-dev libcli11-dev libspdlog-dev libfmt-dev
  libcurl4-openssl-dev libgtest-dev zlib1g-dev libdeflate-dev
  python3-torch python3-numpy python3-torchvision libopenblas0-pthread
  libcpp-httplib-dev chromium
  # The Slurm test (tests/slurm/) runs a single-node cluster: slurm-wlm's daemons and
  # client (the parts of the slurm-wlm metapackage it needs) and munge for authentication.
  slurmctld slurmd slurm-client munge
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
