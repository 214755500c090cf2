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
K=/opt/k8s-1.34
RC=${REAL_CLUSTER:-../shared/real-cluster}
export KUBECONFIG=$K/admin.kubeconfig
PATH=$K/bin:$PATH
NODES=${NODES:-5000} PODS=${PODS:-2000} ROUNDS=${ROUNDS:-2}
W=$(mktemp -d)
py() { python3 bench/real_scheduler_throughput.py "$@"; }
cleanup() {
  kill "${ext:-}" 2>/dev/null || true
  py clean >/dev/null || true
  kill "${proxy:-}" 2>/dev/null || true
  "$RC/cluster-1.34.sh" start controller-manager >/dev/null
  "$RC/cluster-1.34.sh" start scheduler >/dev/null
  rm -rf "$W"
}
trap cleanup EXIT

"$RC/cluster-1.34.sh" stop scheduler controller-manager >/dev/null
kubectl proxy --port=8001 >"$W/proxy.log" 2>&1 & proxy=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:8001/version >/dev/null && break; sleep 0.2; done
py clean >/dev/null  # nodes left by an earlier run may carry the controller-manager's taints
build/bin/gen_cluster --nodes "$NODES" --pods 0 >"$W/nodes.ndjson" 2>/dev/null
py load-nodes "$W/nodes.ndjson"

config() {  # $1 = with extender (0/1)
  cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $K/config/scheduler.kubeconfig, qps: 5000, burst: 5000}
leaderElection: {leaderElect: false}
YAML
  [ "$1" = 1 ] && cat <<YAML
extenders:
- urlPrefix: http://127.0.0.1:12345
  filterVerb: filter
$( [ "${PRIORITIZE:-1}" = 1 ] && printf '  prioritizeVerb: prioritize\n  weight: 5' )
  bindVerb: bind
  nodeCacheCapable: true
  httpTimeout: 10s
  managedResources:
  - {name: aws.amazon.com/neuron, ignoredByScheduler: false}
  - {name: aws.amazon.com/neuroncore, ignoredByScheduler: false}
YAML
  true
}
config 0 >"$W/plain.yaml"
config 1 >"$W/extender.yaml"
sched() {
  echo kube-scheduler --config="$1" --authentication-kubeconfig=$K/config/scheduler.kubeconfig \
    --authorization-kubeconfig=$K/config/scheduler.kubeconfig --bind-address=127.0.0.1 \
    --secure-port=10260 --v=1
}

for round in $(seq "$ROUNDS"); do
  py run --pods "$PODS" --timeout 240 --label "plain-$round" -- $(sched "$W/plain.yaml")
  py clean-pods >/dev/null
  build/bin/neuron-scheduler-extender --listen=127.0.0.1:12345 --log-level=warn \
      --scheduler-name=default-scheduler \
    >"$W/extender.log" 2>&1 & ext=$!
  sleep 3  # its watch lists the nodes first
  t0=$(awk '{print $14+$15}' /proc/$ext/stat)
  py run --pods "$PODS" --timeout 240 --label "extender-$round" -- $(sched "$W/extender.yaml")
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
