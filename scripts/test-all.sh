#!/usr/bin/env bash
# `npm test`: builds and runs every test suite. Each step prints its own runner's summary.
#  1. native Catch2 suite (g++), and again under AddressSanitizer + UndefinedBehaviorSanitizer
#  2. the four libFuzzer targets (clang), three minutes in all, from the committed seed corpora
#  3. the same Catch2 suite compiled to wasm (SIMD and baseline) and run by Node through ctest
#  4. the npm package build (dist/), its node:test suites, several instances and Web Workers in
#     Chromium (tests/browser/), and tsc --strict over index.d.ts
#  5. the packed tarball installed into Node, Vite, webpack and plain-page consumers (Chromium)
#  6. the demo page built and driven end to end in Chromium
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
JOBS="$(nproc)"

step() { printf '\n=== %s\n' "$*"; }

step "native build and Catch2 suite"
cmake -S . -B build/native -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j "$JOBS"
ctest --test-dir build/native --output-on-failure

step "native Catch2 suite under ASan + UBSan"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPOSENC_SANITIZE=ON >/dev/null
cmake --build build/asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/asan --output-on-failure

step "libFuzzer targets, three minutes in all, from the committed seed corpora"
bash scripts/fuzz.sh "${POSENC_FUZZ_SECONDS:-60}"

step "wasm build (SIMD + baseline) and the Catch2 suite under Node"
# (the threaded modules are built once, by npm run build below: tests/js/threads.test.mjs runs them)
emcmake cmake -S . -B build/wasm -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOSENC_WASM_THREADS=OFF >/dev/null
cmake --build build/wasm -j "$JOBS"
ctest --test-dir build/wasm --output-on-failure

step "npm package build"
npm run build

step "JavaScript tests (node:test, against dist/; the onnxruntime example's page in Chromium too)"
POSENC_EXAMPLE_BROWSER=1 node --test tests/js/

step "several instances in one page and init() in 4 Web Workers (Chromium, against dist/)"
node --test --test-reporter=spec tests/browser/

step "TypeScript declarations (tsc --noEmit --strict)"
npx tsc -p tests/types/tsconfig.json

step "packed tarball in Node, Vite, webpack and a plain page (Chromium)"
node tests/consumers/run.mjs

step "demo page end to end (Chromium)"
npx vite build web && node --test --test-reporter=spec tests/e2e/

printf '\nall test steps passed\n'
