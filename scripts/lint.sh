#!/usr/bin/env bash
# make lint: clang-format check, the function-length check (scripts/check_function_length.py),
# then clang-tidy-14 with .clang-tidy over the release build's compile_commands.json, which also
# runs the const-json index check (scripts/check_const_json_index.py) on lib/ and cmd/. Only our
# sources (lib/ cmd/ tests/ bench/), not generated protobuf.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}

git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror
# Functions over 60 lines in lib/ and cmd/ say why, or are split.
python3 scripts/check_function_length.py lib cmd

[ -f "$BUILD/compile_commands.json" ] || cmake --preset release >/dev/null
# Sources include generated protobuf headers (proto/'s and the fake apiserver's kube.pb.h): every
# one must exist before clang-tidy parses them, and CI lints a freshly configured tree.
pb_headers=$(ninja -C "$BUILD" -t targets all | grep -o '^[^:]*\.pb\.h' | sort -u)
cmake --build "$BUILD" -j "$JOBS" --target $pb_headers >/dev/null

# clang-tidy runs through scripts/clang_tidy_cached.py: a translation unit whose preprocessed
# source, flags, .clang-tidy and clang-tidy version were linted before replays that result
# (cache outside the clone: NEURON_TIDY_CACHE, default ~/.cache/neuron-clang-tidy); a unit none of
# whose files (source and every header, by content) changed replays without even preprocessing.
# The wrapper runs on Debian's python3, not a pyenv shim: it starts once per translation unit.
cache=${NEURON_TIDY_CACHE:-$HOME/.cache/neuron-clang-tidy}
export NEURON_TIDY_CACHE=$cache
mkdir -p "$cache"
find "$cache" -type f -mtime +30 -delete  # entries no run has used for a month
# operator[] with a key on a const nlohmann::json (undefined behaviour when the key is missing) in
# lib/ and cmd/: the compiler finds them. check_const_json_index.py writes a copy of nlohmann's
# header whose const key overloads are [[deprecated(MARKER)]]; lib/ and cmd/ are linted with it
# first on the include path and the deprecation as an error (see the script for how and its limits).
shadow=$(cd "$BUILD" && pwd)/const-json-shadow
python3 scripts/check_const_json_index.py -p "$BUILD" --shadow-dir "$shadow" >/dev/null
marker=NEURON_CONST_JSON_KEY_INDEX

# By default only the checks that fail lint (.clang-tidy WarningsAsErrors) run: the full list
# takes twice as long on 2 cores and its other findings are advice. LINT_ALL=1 runs them all.
checks=-*,$(awk '/^WarningsAsErrors:/{f=1; next} f && /^[A-Za-z]/{f=0} f' .clang-tidy | tr -d ' \n')
if [ -n "${LINT_ALL:-}" ]; then checks=""; fi
# -Wthread-safety: clang's analysis of the ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED
# annotations, reported as clang-diagnostic-thread-safety-* (an error, per .clang-tidy).
tidy() {  # tidy FILE_REGEX [ARGS]: -quiet prints only findings; non-zero when any file has an error
  local files=$1
  shift
  run-clang-tidy-14 -clang-tidy-binary "$PWD/scripts/clang_tidy_cached.py" -p "$BUILD" \
    -j "$JOBS" -quiet -extra-arg=-Wthread-safety -header-filter="^$PWD/(lib|cmd|tests|bench)/" \
    "$@" "$files" 2>&1 |
    grep -v "warnings generated" |
    sed "s|$marker|& (operator[] with a key on a const nlohmann::json: undefined when the key is missing; read through lib/base/json_access.h)|"
  return "${PIPESTATUS[0]}"
}
# Translation units: a source compiled on its own, or a unity batch (cmake/helpers.cmake) under
# the build tree's mirror of its directory; generated protobuf sources are neither.
build_abs=$(cd "$BUILD" && pwd)
units() { echo "^($PWD/($1)/|$build_abs/($1)/(.+/)?unity/[^/]+\.cc\$)"; }
# A unity build hands GCC -Wno-subobject-linkage, which clang does not know: let it pass.
gcc_only=()
if grep -q -- "-Wno-subobject-linkage" "$BUILD/compile_commands.json"; then
  gcc_only=(-extra-arg=-Wno-unknown-warning-option)
fi
# The two passes run side by side, each JOBS wide, and print their findings when both are done:
# one after the other, each pass's last long units left a core idle.
out_lib=$(mktemp)
out_tests=$(mktemp)
trap 'rm -f "$out_lib" "$out_tests"' EXIT
set +e
start=$(date +%s)
tidy "$(units 'lib|cmd')" ${checks:+-checks="$checks"} "${gcc_only[@]}" \
  -extra-arg-before="-isystem$shadow" -extra-arg=-Wdeprecated-declarations >"$out_lib" &
pid_lib=$!
tidy "$(units 'tests|bench')" ${checks:+-checks="$checks"} "${gcc_only[@]}" >"$out_tests" &
pid_tests=$!
wait "$pid_lib"
rc_lib=$?
wait "$pid_tests"
rc_tests=$?
cat "$out_lib" "$out_tests"
set -e
echo "lint: clang-tidy took $(( $(date +%s) - start ))s (cache $cache: $(find "$cache" -type f | wc -l) entries)"
if [ "$rc_lib" -ne 0 ] || [ "$rc_tests" -ne 0 ]; then exit 1; fi
echo "lint: clang-format, function length, const json index and clang-tidy clean"
