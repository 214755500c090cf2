#!/usr/bin/env bash
# Runs every benchmark in build/bin and prints its figures (recorded in bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
for b in build/bin/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
  echo
done
