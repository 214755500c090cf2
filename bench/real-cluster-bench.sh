# bench/real-cluster-bench.sh: sourced by the real-cluster benches (real-scheduler-*.sh). Stops
# the cluster's kube-scheduler and controller-manager (the benches run their own scheduler, and
# the controller-manager would taint kubelet-less nodes), opens `kubectl proxy` on :8001 for the
# Python drivers, and on exit cleans up with `py clean` and restarts both. The caller defines
# py() first; $ext, when set, is a process to kill on exit.
K=${K8S_HOME:-/opt/k8s-1.34}
RC=${REAL_CLUSTER:-../shared/real-cluster}
export KUBECONFIG=$K/admin.kubeconfig
PATH=$K/bin:$PATH
W=$(mktemp -d)
bench_cleanup() {
  kill "${ext:-}" 2>/dev/null || true
  py clean >/dev/null || true
  kill "${proxy:-}" 2>/dev/null || true
  "$RC/cluster-1.34.sh" start controller-manager >/dev/null
  "$RC/cluster-1.34.sh" start scheduler >/dev/null
  rm -rf "$W"
}
trap bench_cleanup EXIT
"$RC/cluster-1.34.sh" stop scheduler controller-manager >/dev/null
kubectl proxy --port=8001 >"$W/proxy.log" 2>&1 & proxy=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:8001/version >/dev/null && break; sleep 0.2; done

# kube-scheduler's configuration for a bench run: $1 = 1 beside our extender on :12345 (the
# config the operator writes: filter, prioritize unless PRIORITIZE=0, bind, nodeCacheCapable).
# Client QPS raised so its rate limit is not what is measured; PCT sets percentageOfNodesToScore.
scheduler_config() {
  cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $K/config/scheduler.kubeconfig, qps: 5000, burst: 5000}
leaderElection: {leaderElect: false}
YAML
  [ -n "${PCT:-}" ] && echo "percentageOfNodesToScore: $PCT"
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
# The kube-scheduler command for config file $1; its /debug/pprof open on loopback.
scheduler_command() {
  echo kube-scheduler --config="$1" --authentication-kubeconfig=$K/config/scheduler.kubeconfig \
    --authorization-kubeconfig=$K/config/scheduler.kubeconfig --bind-address=127.0.0.1 \
    --secure-port=10260 --authorization-always-allow-paths=/healthz,/readyz,/livez,/debug/pprof/* \
    --v=1
}
# Our extender on :12345 for kube-scheduler's default profile; its pid in $ext.
start_extender() {
  build/bin/neuron-scheduler-extender --listen=127.0.0.1:12345 --log-level=warn \
    --scheduler-name=default-scheduler >"$W/extender.log" 2>&1 &
  ext=$!
  sleep 3  # its watch lists the nodes first
}
