#!/usr/bin/env bash
# Installs every Debian package and Python tool Kiln's build, tests and benchmarks need.
# Idempotent: safe to run again; skips apt when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git file
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libxnnpack-dev libpthreadpool-dev
  ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  nlohmann-json3-dev
  abigail-tools binutils clang-format
  python3 python3-pip python3-venv
  # Debian packages (cpack -G DEB, test package.deb): dpkg-shlibdeps,
  # dpkg-architecture. The Python package's native module: Python headers.
  # ccache lets the .deb and wheel builds reuse the main build's objects.
  dpkg-dev python3-dev ccache
  # Fuzzing (cmake --preset fuzz, fuzz/run_fuzzers.sh): clang with the
  # libFuzzer and sanitizer runtimes, llvm-symbolizer for readable reports.
  clang libclang-rt-dev llvm
)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

# Python tooling for tests only (LiteRT is the differential-test oracle; never used by the runtime).
PY=${PYTHON:-python3}
# ai-edge-quantizer makes blockwise-quantized test models (cpu_blockwise_fc_vs_litert).
if ! "$PY" -c "import numpy, ai_edge_litert, ai_edge_quantizer" 2>/dev/null; then
  echo "setup: installing Python test tools (numpy, ai-edge-litert, ai-edge-quantizer)"
  "$PY" -m pip install -q numpy ai-edge-litert ai-edge-quantizer ||
    "$PY" -m pip install -q --break-system-packages numpy ai-edge-litert ai-edge-quantizer
fi
echo "setup: done"
