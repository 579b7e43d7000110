#!/usr/bin/env bash
# Installs ProbeScope's build and test dependencies from Debian 12 packages.
# Idempotent: when every package is already installed, apt is not called at all.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config ccache
    qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools qt6-translations-l10n libqcustomplot-dev
    nlohmann-json3-dev libgtest-dev libgmock-dev
    libxlsxwriter-dev zlib1g-dev libyaml-cpp-dev libzip-dev
    libsqlite3-dev
    openmpi-bin libopenmpi-dev
    libtorch-dev
    pybind11-dev python3-dev python3-torch
    xvfb xauth fonts-noto-cjk
    lintian
)
# The libFuzzer targets (tests/fuzz, the `fuzz` preset) and the `tsan` preset build with Debian's clang;
# libFuzzer and the sanitizer runtimes are in libclang-rt-14-dev, only a recommended package of clang.
if [[ "${PROBESCOPE_WITH_FUZZ:-0}" == "1" ]]; then
    packages+=(clang libclang-rt-14-dev)
fi
# pybind11-dev and python3-dev build the Python module `probescope` (core/collect/python); python3-torch
# runs its tests and the .pt cross-checks. PROBESCOPE_WITH_PYTHON_TORCH=1 is still accepted (no-op now).

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q
"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
