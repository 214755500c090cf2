#!/usr/bin/env bash
# Runs every libFuzzer target of the fuzz build (or those named as arguments) for FUZZ_SECONDS
# each, FUZZ_JOBS at a time, and fails if any of them reports a crash, leak, timeout or sanitizer
# error. Each target works on a scratch corpus under <build>/fuzz-corpus/<target>, seeded from
# its checked-in corpus, so runs never modify the repository (and later runs start from what
# earlier ones found). Prints one summary line per target.
#   FUZZ_SECONDS=N  time per target (default 30)
#   FUZZ_RUNS=N     also stop a target after N executions (campaigns: FUZZ_RUNS=1000000)
#   FUZZ_BUILD=dir  build directory of the fuzz targets (default build/asan: make fuzz)
#   FUZZ_JOBS=N     targets run at once (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-30}
build=${FUZZ_BUILD:-build/asan}
list=$build/fuzz_targets.txt
if [ ! -f "$list" ]; then
  echo "fuzz-run: $list missing: build the fuzz targets first (make fuzz)" >&2
  exit 2
fi

# Sanitizer reports are fatal (libFuzzer then saves the input); leaks are checked per input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# One target: prints its summary line; exit status 1 when it found something.
fuzz_one() {
  local name=$1 seeds=$2
  local bin=$build/bin/$name work=$build/fuzz-corpus/$name artifacts=$build/fuzz-artifacts/$name
  local log=$build/fuzz-logs/$name.log
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  cp -r "$seeds"/. "$work"/
  local args=(-max_total_time="$seconds" -print_final_stats=1 -detect_leaks=1 -timeout=25
              -rss_limit_mb=2048 -artifact_prefix="$artifacts/")
  if [ -n "${FUZZ_RUNS:-}" ]; then args+=(-runs="$FUZZ_RUNS"); fi
  local status=ok
  "$bin" "${args[@]}" "$work" >"$log" 2>&1 || status=FAILED
  # libFuzzer's last progress line ("#N DONE cov: C ft: F corp: K/Sb ...") and final stats.
  local last execs cov ft corp
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$last")
  printf 'fuzz: %-24s %-6s execs=%s cov=%s ft=%s corpus=%s log=%s\n' "$name" "$status" \
    "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$log"
  if [ "$status" != ok ]; then
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written' "$log" | head -n 20 >&2 || true
    return 1
  fi
}

# FUZZ_JOBS targets at a time (default: one per core); each target is one process.
jobs=${FUZZ_JOBS:-$(nproc)}
failed=()
declare -A running=()
ran=0
reap() {  # waits for one target to end and records a failure
  local pid
  wait -n -p pid && rc=0 || rc=$?
  if [ "$rc" -ne 0 ]; then failed+=("${running[$pid]}"); fi
  unset "running[$pid]"
}
while read -r name seeds; do
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  ran=$((ran + 1))
  while [ "${#running[@]}" -ge "$jobs" ]; do reap; done
  fuzz_one "$name" "$seeds" &
  running[$!]=$name
done <"$list"
while [ "${#running[@]}" -gt 0 ]; do reap; done

if [ "$ran" -eq 0 ]; then
  echo "fuzz-run: no target matched '$*' in $list" >&2
  exit 2
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-run: FAILED: ${failed[*]} (inputs in $build/fuzz-artifacts/<target>/)" >&2
  exit 1
fi
