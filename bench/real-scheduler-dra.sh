#!/usr/bin/env bash
# bench/real-scheduler-dra.sh: the real kube-scheduler's pods/s through DRA beside extended
# resources and our extender, on the v1.34 cluster of ../shared/real-cluster (issue 31). Not in
# CI: it needs that cluster running (cluster-1.34.sh start), a release build (make build) and
# python3-yaml; `go tool pprof` (golang-go) summarises the scheduler's profiles when present.
#
#   NODES=500 PODS=1000 bench/real-scheduler-dra.sh
#   LAYOUTS="ours minimal" SHAPES="ext extender dra1 dra4 dra16" (the defaults)
#   CLASSES=file.yaml   the DeviceClasses to apply (deploy/dra/deviceclass.yaml)
#   PCT=N               kube-scheduler's percentageOfNodesToScore (unset: its adaptive default)
#   DRA16_PODS=N        pods of the all-devices shape (PODS; at most NODES)
#
# NODES trn2.48xlarge nodes are registered without kubelets, each with the ResourceSlice our
# driver publishes (bench/gen_dra_cluster, the driver's own slice builder) and allocatable
# aws.amazon.com/neuron. Per layout (ours; minimal: the same devices with only the attributes
# the claims read), per shape, PODS claims and pods are created first, then kube-scheduler
# starts (client QPS raised) and the binds are timed from a watch. Shapes: ext = 4 devices as an
# extended resource; extender = the same beside our extender (filter, prioritize, bind); dra1 =
# one device; dra4 = AWS's 1x4-connected-devices; dra16 = AWS's all-devices (one pod per node).
# Each DRA run records the scheduler's CPU profile (OUT/profile-<layout>-<shape>.pb.gz).
# The controller-manager is stopped for the run (it would taint kubelet-less nodes) and
# restarted after, with the cluster's own scheduler.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${NODES:-500} PODS=${PODS:-1000}
LAYOUTS=${LAYOUTS:-ours minimal}
SHAPES=${SHAPES:-ext extender dra1 dra4 dra16}
OUT=${OUT:-/tmp/real-scheduler-dra}
PROFILE_SECONDS=${PROFILE_SECONDS:-15}
mkdir -p "$OUT"
for b in gen_dra_cluster neuron-scheduler-extender; do
  [ -x "build/bin/$b" ] || { echo "no build/bin/$b (make build)" >&2; exit 1; }
done
py() { python3 bench/real_scheduler_dra.py "$@"; }
. bench/real-cluster-bench.sh
py clean >/dev/null
kubectl apply -f "${CLASSES:-deploy/dra/deviceclass.yaml}" >/dev/null
build/bin/gen_dra_cluster --nodes "$NODES" --what nodes >"$W/nodes.ndjson"
py load "$W/nodes.ndjson"

scheduler_config 0 >"$W/plain.yaml"
scheduler_config 1 >"$W/extender.yaml"

run_shape() {  # $1 layout, $2 shape
  local layout=$1 shape=$2 pods=$PODS config=$W/plain.yaml profile=() s=$2
  [ "$shape" = dra16 ] && pods=${DRA16_PODS:-$PODS}
  [ "$shape" = dra16 ] && [ "$pods" -gt "$NODES" ] && pods=$NODES
  if [ "$shape" = extender ]; then
    s=ext config=$W/extender.yaml
    start_extender
  fi
  [[ $shape == dra* ]] && profile=(--profile "$OUT/profile-$layout-$shape.pb.gz"
                                   --profile-seconds "$PROFILE_SECONDS")
  py run --shape "$s" --pods "$pods" --label "$layout-$shape" "${profile[@]}" -- $(scheduler_command "$config") \
    | tee -a "$OUT/results.ndjson"
  if [ -n "${ext:-}" ]; then kill "$ext"; wait "$ext" 2>/dev/null || true; ext=; fi
  py clean-pods >/dev/null
}

: >"$OUT/results.ndjson"
for layout in $LAYOUTS; do
  py delete-slices >/dev/null
  build/bin/gen_dra_cluster --nodes "$NODES" --what slices --layout "$layout" >"$W/slices.ndjson"
  py load "$W/slices.ndjson"
  for shape in $SHAPES; do
    # the extended-resource shapes do not read slices: once is enough
    [ "$layout" != ours ] && [[ $shape != dra* ]] && continue
    run_shape "$layout" "$shape"
  done
done

if command -v go >/dev/null; then
  for f in "$OUT"/profile-*.pb.gz; do
    [ -s "$f" ] || continue
    go tool pprof -top -nodecount=30 "$f" 2>/dev/null >"${f%.pb.gz}.top.txt" || true
  done
  echo "profiles: $OUT/profile-*.top.txt (go tool pprof -top)"
fi
