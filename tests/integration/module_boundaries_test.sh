#!/usr/bin/env bash
# The extender and the device plugin share only lib/topology and lib/assignment (DESIGN.md §3):
# neither includes the other, and the extender binary loads no gRPC, protobuf or libpci.
#   module_boundaries_test.sh SOURCE_DIR EXTENDER_BINARY
set -euo pipefail
src=$1
extender=$2
fail=0
for pair in "extender:deviceplugin" "deviceplugin:extender"; do
  from=${pair%%:*}
  to=${pair##*:}
  if hits=$(grep -rn "#include \"lib/$to/" "$src/lib/$from"); then
    echo "lib/$from includes lib/$to:"
    echo "$hits"
    fail=1
  fi
done
if libs=$(ldd "$extender" | grep -E 'libgrpc|libprotobuf|libpci'); then
  echo "$(basename "$extender") loads libraries it should not need:"
  echo "$libs"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "module boundaries hold: 1 passed, 0 failed"
exit "$fail"
