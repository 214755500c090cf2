#!/usr/bin/env bash
# make lint: clang-format check, the function-length check (scripts/check_function_length.py),
# the const-json index check (scripts/check_const_json_index.py), then clang-tidy-14 with
# .clang-tidy over the release build's compile_commands.json. Only our sources (lib/ cmd/
# tests/ bench/), not generated protobuf.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}

git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror
# Functions over 60 lines in lib/ and cmd/ say why, or are split.
python3 scripts/check_function_length.py lib cmd

[ -f "$BUILD/compile_commands.json" ] || cmake --preset release >/dev/null
# Sources include the generated protobuf headers: they must exist before clang-tidy parses them.
cmake --build "$BUILD" --target neuron_proto -j "$JOBS" >/dev/null

# operator[] with a key on a const nlohmann::json (undefined behaviour when the key is missing) in
# lib/ and cmd/: the compiler finds them, see the script for how and its limits.
python3 scripts/check_const_json_index.py -p "$BUILD" -j "$JOBS" lib cmd

ours="^$PWD/(lib|cmd|tests|bench)/"
# By default only the checks that fail lint (.clang-tidy WarningsAsErrors) run: the full list
# takes twice as long on 2 cores and its other findings are advice. LINT_ALL=1 runs them all.
checks=()
if [ -z "${LINT_ALL:-}" ]; then
  errors=$(awk '/^WarningsAsErrors:/{f=1; next} f && /^[A-Za-z]/{f=0} f' .clang-tidy | tr -d ' \n')
  checks=(-checks="-*,$errors")
fi
# -quiet: only findings. run-clang-tidy exits non-zero when any file has an error.
set +e
# -Wthread-safety: clang's analysis of the ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED
# annotations, reported as clang-diagnostic-thread-safety-* (an error, per .clang-tidy).
run-clang-tidy-14 -p "$BUILD" -j "$JOBS" -quiet "${checks[@]}" -extra-arg=-Wthread-safety \
  -header-filter="$ours" "$ours" |
  grep -v "warnings generated"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] && echo "lint: clang-format, function length, const json index and clang-tidy clean"
exit "$rc"
