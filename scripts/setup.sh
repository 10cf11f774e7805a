#!/usr/bin/env bash
# Installs everything posenc needs on a fresh Debian bookworm machine (as root, or with sudo):
# Emscripten 3.1.6, the native toolchain and test libraries, Chromium for browser tests, and the
# npm devDependencies. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  cmake ninja-build g++ clang lld libclang-rt-14-dev clang-format
  emscripten catch2 nlohmann-json3-dev libsimde-dev
  chromium
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

command -v node >/dev/null || { echo "setup: Node.js >= 20 is required" >&2; exit 1; }
node -e 'process.exit(parseInt(process.versions.node) >= 20 ? 0 : 1)' ||
  { echo "setup: Node.js >= 20 is required, found $(node --version)" >&2; exit 1; }

npm ci --no-audit --no-fund
echo "setup: done"
