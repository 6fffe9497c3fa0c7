#!/usr/bin/env bash
# Installs the Debian packages slaterlab needs that are missing, and nothing
# else. Idempotent: a second run installs nothing. Needs root or sudo only
# when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libeigen3-dev libboost-dev libopenblas-dev libhdf5-dev hdf5-tools
  libgtest-dev librapidcheck-dev libbenchmark-dev
  libflint-arb-dev libflint-dev libcli11-dev libtomlplusplus-dev libfmt-dev
  libtrexio-dev  # molecule files (TREXIO)
  python3-h5py python3-numpy python3-matplotlib
  openmpi-bin libopenmpi-dev
  libssl-dev gfortran  # external kernels: SHA-256 of a library; the Fortran example
  clang-14 libclang-rt-14-dev  # the fuzz preset: libFuzzer, ASan, UBSan (scripts/fuzz-readers.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 2; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
