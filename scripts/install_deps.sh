#!/usr/bin/env bash
# Installs what the build needs and this machine lacks: Debian packages (Catch2, spdlog, fmt,
# Google Benchmark, ninja) and NVIDIA's pinned CCCL headers from PyPI. Safe to run repeatedly.
set -euo pipefail
CCCL_PIP_VERSION=13.3.5.0.6  # CCCL 3.5.0; see docs/dependencies.md for why this pin

need_apt=()
for pkg in catch2 libspdlog-dev libfmt-dev libbenchmark-dev ninja-build cmake; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install_deps: apt-get install ${need_apt[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

installed=$(python3 -c 'import importlib.metadata as m; print(m.version("nvidia-cuda-cccl"))' 2>/dev/null || true)
if [ "$installed" != "$CCCL_PIP_VERSION" ]; then
  echo "install_deps: pip install nvidia-cuda-cccl==$CCCL_PIP_VERSION"
  python3 -m pip install -q --disable-pip-version-check "nvidia-cuda-cccl==$CCCL_PIP_VERSION"
fi
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "install_deps: the CUDA 13 toolkit (nvcc) is required at /usr/local/cuda" >&2
  exit 1
}
