#!/usr/bin/env bash
# make lint: clang-format check, then clang-tidy-14 with .clang-tidy over the release build's
# compile_commands.json. Only our sources (lib/ cmd/ tests/ bench/), not generated protobuf.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}

git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror

[ -f "$BUILD/compile_commands.json" ] || cmake --preset release >/dev/null
# Sources include the generated protobuf headers: they must exist before clang-tidy parses them.
cmake --build "$BUILD" --target neuron_proto -j "$JOBS" >/dev/null

ours="^$PWD/(lib|cmd|tests|bench)/"
# -quiet: only findings. run-clang-tidy exits non-zero when any file has an error
# (.clang-tidy makes every finding an error).
run-clang-tidy-14 -p "$BUILD" -j "$JOBS" -quiet -header-filter="$ours" "$ours"
