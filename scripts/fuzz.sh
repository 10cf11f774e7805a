#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a bounded time from
# its committed seed corpus (copied, so the repository's corpus is not modified) and, when there
# is one, its dictionary fuzz/<name>.dict.
#   bash scripts/fuzz.sh [seconds per share, default 60]
# The time is given in shares: fuzz_safetensors and fuzz_encode (whose quad-precision oracle
# makes it slow, and which found a rounding bug after two minutes) keep a whole share each;
# fuzz_rotary and fuzz_stateful split one. Total: three shares, and a third of one for
# fuzz/fuzz_relative.mjs (posenc/relative, JavaScript).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_SHARE="${1:-60}"
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DPOSENC_FUZZ=ON -DPOSENC_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j "$(nproc)"
for target in build/fuzz/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  name="$(basename "$target")"
  corpus="fuzz/corpus/${name#fuzz_}"
  dict="fuzz/${name#fuzz_}.dict"
  dict_flag=()
  [ -f "$dict" ] && dict_flag=(-dict="$dict")
  case "$name" in
    fuzz_rotary | fuzz_stateful) SECONDS_PER_TARGET=$(((SECONDS_PER_SHARE + 1) / 2)) ;;
    *) SECONDS_PER_TARGET=$SECONDS_PER_SHARE ;;
  esac
  work="$(mktemp -d)"
  cp -r "$corpus"/. "$work"/
  echo "fuzz: $name for ${SECONDS_PER_TARGET}s from $corpus"
  "$target" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 "${dict_flag[@]}" \
    -artifact_prefix="build/fuzz/$name-" "$work" 2>&1 | grep -E '^(Done|stat::number_of_executed_units|==|SUMMARY)' || true
  # Any artifact fails the run (ls of the three globs succeeded only when all three kinds existed).
  if compgen -G "build/fuzz/$name-crash-*" >/dev/null || compgen -G "build/fuzz/$name-leak-*" >/dev/null ||
    compgen -G "build/fuzz/$name-timeout-*" >/dev/null || compgen -G "build/fuzz/$name-oom-*" >/dev/null; then
    echo "fuzz: $name found a failing input (see build/fuzz/)" >&2
    exit 1
  fi
  rm -rf "$work"
done
# posenc/relative is plain JavaScript: a randomized differential run against a direct port.
node fuzz/fuzz_relative.mjs "$(((SECONDS_PER_SHARE + 2) / 3))"
echo "fuzz: all targets ran clean"
