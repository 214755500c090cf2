#!/usr/bin/env bash
# real-cluster-pod-metrics.sh: who holds which NeuronCore, on the REAL single-node Kubernetes 1.34
# of ../shared/real-cluster (cluster-1.34.sh start). CI cannot run this; it is for people.
#
# Runs on the host, all emulating $SHAPE: our device plugin (aws.amazon.com/neuroncore), our DRA
# driver (scripts/real-cluster-dra.sh driver), the node agent pointed at the kubelet's root with
# --kubelet-dir only (its PodResources socket follows), and a real Prometheus scraping the agent
# every second with deploy/monitoring's rules. Then: one pod through the device plugin, one
# through a DRA claim; the busy counters of the cores they hold are advanced at a known rate in the
# agent's emulated sysfs; prints the agent's neuron_core_allocation series, the per-pod recording
# rules as Prometheus computes them, and how long after each pod's deletion its series are gone.
#
#   real-cluster-pod-metrics.sh run     everything above; exit 1 if an expectation fails
#   real-cluster-pod-metrics.sh stop    stop what `run` started (the DRA driver too)
# Environment: K8S_HOME (/opt/k8s-1.34), KUBELET_ROOT (/var/lib/kubelet-1.34), SHAPE
# (trn2.48xlarge), IMAGE (local/busybox:1.35).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${K8S_HOME:-/opt/k8s-1.34}
KROOT=${KUBELET_ROOT:-/var/lib/kubelet-1.34}
SHAPE=${SHAPE:-trn2.48xlarge}
IMAGE=${IMAGE:-local/busybox:1.35}
NODE=${NODE:-node-1}
NS=neuron-pod-metrics
RUN=$K/run/pod-metrics
AGENT=127.0.0.1:18102
PROM=127.0.0.1:19090
export KUBECONFIG=$K/admin.kubeconfig PATH=$K/bin:$PATH
log() { echo "[$(date +%H:%M:%S)] $*"; }
die() { echo "real-cluster-pod-metrics: $*" >&2; exit 1; }
failures=0
expect() { # description command...
  local what=$1; shift
  if "$@"; then log "PASS: $what"; else log "FAIL: $what"; failures=$((failures + 1)); fi
}

start() { # name command... (log in $RUN/name.log, pid in $RUN/name.pid)
  local name=$1; shift
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$RUN/$name.pid" "$@" >"$RUN/$name.log" 2>&1 </dev/null &
  sleep 1
  [ -d "/proc/$(cat "$RUN/$name.pid")" ] || die "$name exited at once; see $RUN/$name.log"
  log "$name started (pid $(cat "$RUN/$name.pid"), log $RUN/$name.log)"
}

stop() {
  for name in prometheus agent device-plugin; do
    [ -s "$RUN/$name.pid" ] && kill "$(cat "$RUN/$name.pid")" 2>/dev/null && log "$name stopped"
    rm -f "$RUN/$name.pid"
  done
  kubectl delete namespace $NS --ignore-not-found --wait=false >/dev/null 2>&1 || true
  "$ROOT/scripts/real-cluster-dra.sh" stop || true
}

series() { # PromQL -> "labels value" lines from our Prometheus
  curl -fsS "http://$PROM/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    print(" ".join(f"{k}={m[k]}" for k in sorted(m) if k not in ("__name__", "job", "instance")), r["value"][1])'
}

allocation_lines() { curl -fsS "http://$AGENT/metrics" | grep '^neuron_core_allocation{' || true; }

bump_busy() { # seconds: +0.5 s of busy time per wall second on every allocated core
  python3 - "$RUN/emulated" "$1" "$AGENT" <<'PY'
import os, re, sys, time, urllib.request
root, seconds, agent = sys.argv[1], float(sys.argv[2]), sys.argv[3]
page = urllib.request.urlopen(f"http://{agent}/metrics").read().decode()
cores = set(re.findall(r'^neuron_core_allocation\{[^}]*?core="(\d+)",device="(\d+)"', page, re.M) +
            [(c, d) for d, c in re.findall(r'^neuron_core_allocation\{[^}]*?device="(\d+)",core="(\d+)"', page, re.M)])
files = []
for core, dev in sorted(cores):
    # The emulated driver's layout (lib/sysfs/emulator.cc); sysfs links loop, so no recursive glob.
    f = f"{root}/sys/devices/virtual/neuron_device/neuron{dev}/neuron_core{core}/stats/other_info/nc_time_in_use/total"
    if os.path.exists(f):
        files.append(f)
print(f"advancing nc_time_in_use of {len(files)} allocated physical cores by 500000 us per second")
end = time.time() + seconds
while time.time() < end:
    for f in files:
        v = int(open(f).read().strip() or 0) + 500000
        with open(f + ".tmp", "w") as fh:
            fh.write(f"{v}\n")
        os.replace(f + ".tmp", f)
    time.sleep(1)
PY
}

gone_within() { # pod seconds: its series leave the agent's page within `seconds` of the delete
  local t0=$SECONDS
  kubectl -n $NS delete pod "$1" --wait=false >/dev/null
  while allocation_lines | grep -q "pod=\"$1\""; do
    [ $((SECONDS - t0)) -lt "$2" ] || return 1
    sleep 0.2
  done
  log "    $1's series gone from the agent's page $((SECONDS - t0)) s after kubectl delete"
}

run() {
  kubectl get --raw /apis/resource.k8s.io/v1 >/dev/null || die "start the 1.34 cluster first"
  mkdir -p "$RUN/emulated"
  stop >/dev/null 2>&1 || true
  "$ROOT/scripts/real-cluster-dra.sh" driver
  start device-plugin "$ROOT/build/bin/neuron-device-plugin" --emulate="$SHAPE" \
    --emulate-dir="$RUN/dp-emulated" --node-name="$NODE" --kubeconfig="$KUBECONFIG" \
    --pod-resources-socket="$KROOT/pod-resources/kubelet.sock" --metrics-listen=127.0.0.1:18101
  # Only --kubelet-dir: the PodResources socket under it is the default.
  start agent "$ROOT/build/bin/neuron-node-agent" --emulate="$SHAPE" --emulate-dir="$RUN/emulated" \
    --node-name="$NODE" --listen=$AGENT --interval=2s --kubelet-dir="$KROOT"
  python3 - "$ROOT" "$RUN" "$AGENT" <<'PY'
import contextlib, io, sys
sys.path.insert(0, sys.argv[1] + "/tests/monitoring")
from check_monitoring import split_rule_object
with contextlib.redirect_stdout(io.StringIO()):  # its per-line checks print
    _, rules = split_rule_object(open(sys.argv[1] + "/deploy/monitoring/prometheus-rule.yaml").read())
open(sys.argv[2] + "/rules.yaml", "w").write(rules)
open(sys.argv[2] + "/prometheus.yaml", "w").write(f"""global: {{scrape_interval: 1s, evaluation_interval: 1s}}
rule_files: [{sys.argv[2]}/rules.yaml]
scrape_configs:
  - job_name: neuron-node-metrics
    static_configs: [{{targets: ["{sys.argv[3]}"], labels: {{node: node-1}}}}]
""")
PY
  rm -rf "$RUN/tsdb"
  start prometheus prometheus --config.file="$RUN/prometheus.yaml" --storage.tsdb.path="$RUN/tsdb" \
    --web.listen-address=$PROM
  for _ in $(seq 1 60); do
    kubectl get node "$NODE" -o jsonpath='{.status.allocatable.aws\.amazon\.com/neuroncore}' | grep -q '[1-9]' && break
    sleep 1
  done
  kubectl delete namespace $NS --ignore-not-found --wait=true >/dev/null  # a fresh one per run
  kubectl create namespace $NS --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f "$ROOT/deploy/dra/deviceclass.yaml" >/dev/null
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: dp-pod, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: $IMAGE, imagePullPolicy: Never, command: ["busybox", "sleep", "3600"],
     resources: {limits: {aws.amazon.com/neuroncore: 2}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: last-device, namespace: $NS}
spec:
  devices:
    requests:
    - name: neurons
      exactly:
        deviceClassName: neuron.aws.com
        selectors: [{cel: {expression: "device.attributes['neuron.aws.com'].deviceId == 15"}}]
---
apiVersion: v1
kind: Pod
metadata: {name: dra-pod, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: server, image: $IMAGE, imagePullPolicy: Never, command: ["busybox", "sleep", "3600"],
     resources: {claims: [{name: neurons}]}}
  resourceClaims: [{name: neurons, resourceClaimName: last-device}]
YAML
  kubectl -n $NS wait --for=condition=Ready pod/dp-pod pod/dra-pod --timeout=120s
  sleep 3  # one agent interval
  log "the agent's neuron_core_allocation series:"
  allocation_lines | sed 's/^/    /'
  expect "dp-pod holds 4 physical cores (2 logical at LNC 2)" \
    test "$(allocation_lines | grep -c 'pod="dp-pod"')" = 4
  expect "dra-pod holds device 15's 8 physical cores" \
    test "$(allocation_lines | grep 'pod="dra-pod"' | grep -c 'device="15"')" = 8
  bump_busy 150  # the rules' rate window is 2m: past it, the ratio is the bump's alone
  log "per-pod recording rules, as Prometheus computes them:"
  for r in pod:neuron_cores_held:count pod:neuron_core_busy:ratio \
      pod:neuron_device_memory_used_bytes:sum pod:neuron_core_execution_errors:rate; do
    series "$r" | sed "s/^/    $r /"
  done
  expect "Prometheus computes a busy ratio near 0.5 for both pods" python3 - "$PROM" <<'PY'
import json, sys, urllib.parse, urllib.request
q = urllib.parse.quote("pod:neuron_core_busy:ratio")
r = json.load(urllib.request.urlopen(f"http://{sys.argv[1]}/api/v1/query?query={q}"))["data"]["result"]
got = {x["metric"]["pod"]: float(x["value"][1]) for x in r}
sys.exit(0 if set(got) == {"dp-pod", "dra-pod"} and all(0.4 < v < 0.6 for v in got.values()) else 1)
PY
  # Deleted pods end after terminationGracePeriodSeconds (1 s); then one agent interval (2 s).
  expect "dp-pod's series gone within its grace period and one interval" gone_within dp-pod 5
  expect "dra-pod's series stay while it runs" test "$(allocation_lines | grep -c 'pod="dra-pod"')" = 8
  expect "dra-pod's series gone within its grace period and one interval" gone_within dra-pod 5
  kubectl -n $NS delete resourceclaim last-device >/dev/null
  [ "$failures" = 0 ] || die "$failures expectation(s) failed"
  log "all expectations held"
}

case "${1:-}" in
  run) run ;;
  stop) stop ;;
  *) sed -n '2,17p' "$0"; exit 2 ;;
esac
