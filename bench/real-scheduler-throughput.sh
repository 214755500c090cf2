#!/usr/bin/env bash
# bench/real-scheduler-throughput.sh: the real kube-scheduler's pods/s with and without our
# extender, on the v1.34 cluster of ../shared/real-cluster (issue 19's ">= 0.8x" goal). Not in
# CI: it needs that cluster running (cluster-1.34.sh start) and a release build (make build).
#
#   NODES=5000 PODS=2000 ROUNDS=2 bench/real-scheduler-throughput.sh
#   PRIORITIZE=0 ...   the extender config without prioritizeVerb (what that round trip costs)
#
# The controller-manager is stopped for the run (the synthetic nodes have no kubelet, so it
# would taint them unreachable) and restarted after, with the cluster's own scheduler. Each
# round runs the scheduler without the extender, then with it (our binary on the host, at the
# extender config the operator writes: filter, prioritize, bind, nodeCacheCapable), both with
# client QPS raised so the client's rate limit is not what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${NODES:-5000} PODS=${PODS:-2000} ROUNDS=${ROUNDS:-2}
py() { python3 bench/real_scheduler_throughput.py "$@"; }
. bench/real-cluster-bench.sh
py clean >/dev/null  # nodes left by an earlier run may carry the controller-manager's taints
build/bin/gen_cluster --nodes "$NODES" --pods 0 >"$W/nodes.ndjson" 2>/dev/null
py load-nodes "$W/nodes.ndjson"

scheduler_config 0 >"$W/plain.yaml"
scheduler_config 1 >"$W/extender.yaml"

for round in $(seq "$ROUNDS"); do
  py run --pods "$PODS" --timeout 240 --label "plain-$round" -- $(scheduler_command "$W/plain.yaml")
  py clean-pods >/dev/null
  start_extender
  t0=$(awk '{print $14+$15}' /proc/$ext/stat)
  py run --pods "$PODS" --timeout 240 --label "extender-$round" -- $(scheduler_command "$W/extender.yaml")
  t1=$(awk '{print $14+$15}' /proc/$ext/stat)
  awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v n="$PODS" -v r="$round" \
    'BEGIN {printf "{\"label\": \"extender-%s\", \"extender_cpu_ms_per_pod\": %.2f}\n", r, d * 1000 / hz / n}'
  # Our side of each call: mean handler time per verb from the extender's own histogram.
  curl -s http://127.0.0.1:12345/metrics | awk -v r="$round" '
    /^neuron_extender_request_duration_seconds_sum/ {match($0, /verb="[a-z]+"/); v = substr($0, RSTART + 6, RLENGTH - 7); sum[v] = $NF}
    /^neuron_extender_request_duration_seconds_count/ {match($0, /verb="[a-z]+"/); v = substr($0, RSTART + 6, RLENGTH - 7); n[v] = $NF}
    END {for (v in n) if (n[v] > 0) printf "{\"label\": \"extender-%s\", \"verb\": \"%s\", \"calls\": %d, \"handler_mean_ms\": %.3f}\n", r, v, n[v], sum[v] * 1000 / n[v]}'
  kill $ext; wait $ext 2>/dev/null || true; ext=
  py clean-pods >/dev/null
done
