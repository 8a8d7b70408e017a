#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing lcc needs.
# Safe to run more than once; needs root (or sudo).
set -euo pipefail

packages=(
  build-essential clang cmake ninja-build ccache python3
  libclang-rt-14-dev
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libflatbuffers-dev flatbuffers-compiler libgtest-dev
  # lcc-bench's ceiling (OpenBLAS sgemm) and peer (numpy dense attention)
  python3-numpy libopenblas0-pthread
  # the Python package (python/) and its tests; torch for the transcription
  # of Hugging Face's Reformer that lcc-import's models are checked against
  pybind11-dev python3-dev python3-pytest python3-torch
  # the test that renders lcc's pictures (attention maps, training plots)
  chromium
  # several ranks: Open MPI, which the runtime loads at run time, and mpirun
  openmpi-bin libopenmpi3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
