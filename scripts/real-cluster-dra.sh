#!/usr/bin/env bash
# real-cluster-dra.sh: our DRA driver (neuron-device-plugin --api=dra) under a REAL kubelet,
# kube-scheduler and containerd with CDI: the single-node Kubernetes 1.34 of
# ../shared/real-cluster (cluster-1.34.sh start). CI cannot run this; it is for people.
#
#   real-cluster-dra.sh driver   start the driver on the host, emulating $SHAPE (no Neuron
#                                hardware needed: device nodes map to /dev/null), wait for slices
#   real-cluster-dra.sh test     DeviceClasses, AWS's three claim templates and pods using them;
#                                prints what each container sees and where its devices sit
#   real-cluster-dra.sh gated    with the feature gates DRAPartitionableDevices, DRADeviceTaints
#                                and DRAExtendedResource on in the cluster and the driver started
#                                with DRIVER_ARGS="--dra-partitionable-devices --dra-device-taints":
#                                two pods share one device's cores, a whole-device claim waits for
#                                them, an unchanged pod asking aws.amazon.com/neuron is served by
#                                DRA, and a fault written to the emulated sysfs taints its device
#   real-cluster-dra.sh clean    delete the test objects (before stopping the cluster)
#   real-cluster-dra.sh stop     stop the driver
#   real-cluster-dra.sh all      driver + test
# Environment: K8S_HOME (/opt/k8s-1.34), KUBELET_ROOT (/var/lib/kubelet-1.34), SHAPE
# (trn2.48xlarge), BIN (build/bin/neuron-device-plugin), IMAGE (local/busybox:1.35),
# DRIVER_ARGS (extra flags, e.g. "--dra-partitionable-devices --dra-device-taints" when the
# cluster runs with those feature gates). For `gated`, start the control plane and kubelet with
#   G=--feature-gates=DRAPartitionableDevices=true,DRADeviceTaints=true,DRAExtendedResource=true
#   APISERVER_EXTRA_ARGS="$G --runtime-config=resource.k8s.io/v1alpha3=true" CM_EXTRA_ARGS=$G
#   SCHEDULER_EXTRA_ARGS=$G KUBELET_EXTRA_ARGS=$G cluster-1.34.sh start
# (the scheduler waits for DeviceTaintRules, an alpha API, once DRADeviceTaints is on).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${K8S_HOME:-/opt/k8s-1.34}
KROOT=${KUBELET_ROOT:-/var/lib/kubelet-1.34}
SHAPE=${SHAPE:-trn2.48xlarge}
BIN=${BIN:-$ROOT/build/bin/neuron-device-plugin}
IMAGE=${IMAGE:-local/busybox:1.35}
DRIVER_ARGS=${DRIVER_ARGS:-}
NODE=${NODE:-node-1}
NS=neuron-dra-test
EMU=/var/lib/neuron-dra-emulated
export KUBECONFIG=$K/admin.kubeconfig PATH=$K/bin:$PATH
log() { echo "[$(date +%H:%M:%S)] $*"; }
die() { echo "real-cluster-dra: $*" >&2; exit 1; }

driver() {
  [ -x "$BIN" ] || die "no $BIN (make build)"
  kubectl get --raw /apis/resource.k8s.io/v1 >/dev/null || die "resource.k8s.io/v1 not served: start the 1.34 cluster"
  mkdir -p "$K/run" "$K/log" "$KROOT/plugins_registry" "$KROOT/plugins" /var/run/cdi "$EMU"
  local pidf=$K/run/neuron-dra.pid
  if [ -s "$pidf" ] && [ -d "/proc/$(cat "$pidf")" ]; then log "driver already running"; else
    # shellcheck disable=SC2086
    set -- "$BIN" --api=dra --node-name="$NODE" --kubeconfig="$KUBECONFIG" \
      --emulate="$SHAPE" --emulate-dir="$EMU" \
      --kubelet-registrar-dir="$KROOT/plugins_registry" --kubelet-plugins-dir="$KROOT/plugins" \
      --cdi-root=/var/run/cdi --dra-state-dir="$KROOT/plugins/neuron.aws.com" \
      --metrics-listen=127.0.0.1:9465 $DRIVER_ARGS
    echo "=== $(date -u +%FT%TZ) start: $*" >>"$K/log/neuron-dra.log"
    setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidf" "$@" >>"$K/log/neuron-dra.log" 2>&1 </dev/null &
    sleep 1
    [ -d "/proc/$(cat "$pidf")" ] || die "driver exited at once; see $K/log/neuron-dra.log"
    log "driver started (pid $(cat "$pidf"), log $K/log/neuron-dra.log)"
  fi
  # Ready = registered with the kubelet and slices published (a slice alone may be the last
  # run's: they are left in place across restarts). Writing the emulated tree can take a while.
  local ready=""
  for _ in $(seq 1 90); do
    if curl -fsS http://127.0.0.1:9465/readyz >/dev/null 2>&1; then ready=1; break; fi
    sleep 1
  done
  kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o wide
  grep -h 'neuron.aws.com' "$K/log/kubelet.log" | grep -i 'regist' | tail -2 || true
  [ -n "$ready" ] || die "driver not ready after 90 s; see $K/log/neuron-dra.log"
  log "driver ready (registered, slices published)"
}

pod() { # name template [claim-name]
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
  - name: c
    image: $IMAGE
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "busybox env | busybox sort | busybox grep ^NEURON_ ; busybox ls /dev | busybox grep ^neuron | busybox tr '\\\\n' ' '; echo; busybox sleep 3600"]
    resources: {claims: [{name: neurons}]}
  resourceClaims:
  - {name: neurons, ${3:-resourceClaimTemplateName}: $2}
---
YAML
}

# `gated` checks: each expectation that does not hold prints FAIL and makes the run exit 1.
failures=0
expect() { # description command...
  local what=$1; shift
  if "$@"; then log "PASS: $what"; else log "FAIL: $what"; failures=$((failures + 1)); fi
}
driver_pid() { cat "$K/run/neuron-dra.pid" 2>/dev/null; }
driver_alive() { local p; p=$(driver_pid); [ -n "$p" ] && [ -d "/proc/$p" ]; }
ready() { kubectl -n $NS wait --for=condition=Ready "pod/$1" --timeout="${2:-120}s" >/dev/null 2>&1; }
phase_is() { [ "$(kubectl -n $NS get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$2" ]; }
gone_or_failed() { # pod: deleted (eviction) or Failed, within 60 s
  for _ in $(seq 1 60); do
    kubectl -n $NS get pod "$1" >/dev/null 2>&1 || return 0
    phase_is "$1" Failed && return 0
    sleep 1
  done
  return 1
}
claim_devices() { # pod -> allocated device names
  local claim
  claim=$(kubectl -n $NS get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  kubectl -n $NS get resourceclaim "$claim" -o jsonpath='{range .status.allocation.devices.results[*]}{.device}{" "}{end}'
}
cores_of_device0() { # both pods hold one core each of neurondevice0, and not the same one
  local a b
  a=$(claim_devices core-a) b=$(claim_devices core-b)
  echo "    core-a: $a core-b: $b"
  [[ $a == neurondevice0-core* && $b == neurondevice0-core* && $a != "$b" ]]
}
node_advertises_neuron() {
  local a
  a=$(kubectl get node "$NODE" -o jsonpath='{.status.allocatable}')
  [[ $a == *'"aws.amazon.com/neuron"'* ]]
}
no_neuron_on_node() { # the DRAExtendedResource precondition (lib/dra/node_resource_check.h)
  node_advertises_neuron || return 0
  local cap
  cap=$(kubectl get node "$NODE" -o jsonpath='{.status.capacity.aws\.amazon\.com/neuron}')
  if [ "$cap" != 0 ]; then
    log "node $NODE advertises aws.amazon.com/neuron: $cap: a device plugin runs here; stop it first"
    return 1
  fi
  # A device plugin registered here once: the kubelet keeps the name at 0 for good, and
  # kube-scheduler counts the pod against it. Remove it, as the README says.
  log "node $NODE still lists aws.amazon.com/neuron at 0 (a device plugin ran here): removing it from the node's status"
  kubectl patch node "$NODE" --subresource=status --type=json -p '[
    {"op":"remove","path":"/status/capacity/aws.amazon.com~1neuron"},
    {"op":"remove","path":"/status/capacity/aws.amazon.com~1neuroncore"}]' >/dev/null 2>&1 ||
  kubectl patch node "$NODE" --subresource=status --type=json -p '[
    {"op":"remove","path":"/status/capacity/aws.amazon.com~1neuron"}]' >/dev/null
  for _ in $(seq 1 30); do node_advertises_neuron || return 0; sleep 1; done
  return 1
}
taint_on_device0() { # within 5 s of the fault
  for _ in $(seq 1 50); do
    kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json >"$EMU/slices.json"
    python3 - "$EMU/slices.json" <<'PY' && return 0
import json, sys
for s in json.load(open(sys.argv[1]))["items"]:
    for d in s["spec"].get("devices", []):
        if d["name"] == "neurondevice0" and any(t["key"] == "neuron.aws.com/unhealthy" for t in d.get("taints", [])):
            sys.exit(0)
sys.exit(1)
PY
    sleep 0.1
  done
  return 1
}
no_taint_left() { # the device healthy again (after the driver's --healthy-after, 30 s)
  for _ in $(seq 1 90); do
    # (to a file, not `| grep -q`: under pipefail kubectl's SIGPIPE would read as "no taint")
    kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json >"$EMU/slices.json"
    grep -q '"neuron.aws.com/unhealthy"' "$EMU/slices.json" || return 0
    sleep 1
  done
  return 1
}
same_driver() { [ "$(driver_pid)" = "$1" ] && driver_alive; }
no_exit_lines() { ! tail -n +"$1" "$K/log/neuron-dra.log" | grep -E 'exiting code=|terminated by|std::terminate|exit\(\) called' ; }

gated() {
  failures=0
  driver_alive || die "the driver is not running: real-cluster-dra.sh driver first"
  # A fresh namespace, so that runs can follow each other.
  kubectl delete namespace $NS --ignore-not-found --wait=true >/dev/null
  kubectl create namespace $NS --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f "$ROOT/deploy/dra/deviceclass.yaml" -f "$ROOT/deploy/dra/deviceclass-extended-resource.yaml" >/dev/null
  kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json | python3 -c "
import json,sys
items=json.load(sys.stdin)['items']
devs=[d for s in items for d in s['spec'].get('devices',[])]
print('slices', len(items), 'devices', len(devs), 'of which cores', sum(1 for d in devs if d['name'].count('-core')),
      'counter sets', sum(len(s['spec'].get('sharedCounters',[])) for s in items))"
  kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-core, namespace: $NS}
spec:
  spec:
    devices:
      requests:
      - name: neurons
        exactly: {deviceClassName: neuroncore.aws.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: device-0-whole, namespace: $NS}
spec:
  devices:
    requests:
    - name: neurons
      exactly:
        deviceClassName: neuron.aws.com
        selectors:
        - cel: {expression: "device.attributes['neuron.aws.com'].deviceId == 0"}
---
YAML
  { pod core-a one-core; pod core-b one-core; } | kubectl apply -f - >/dev/null
  expect "core-a and core-b Running" eval 'ready core-a && ready core-b'
  expect "core-a and core-b share device 0 (one core each)" cores_of_device0
  pod whole-0 device-0-whole resourceClaimName | kubectl apply -f - >/dev/null
  sleep 5
  expect "whole-0 waits while cores of device 0 are held" phase_is whole-0 Pending
  kubectl -n $NS delete pod core-a core-b --wait=true >/dev/null
  expect "whole-0 Running once they are gone" ready whole-0
  show whole-0

  log "extended resource: a pod asking aws.amazon.com/neuron: 2, no claim in its spec"
  expect "node $NODE does not advertise aws.amazon.com/neuron" no_neuron_on_node
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: extended, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: $IMAGE
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "busybox env | busybox sort | busybox grep ^NEURON_ ; busybox ls /dev | busybox grep ^neuron | busybox tr '\\n' ' '; echo; busybox sleep 3600"]
    resources: {limits: {aws.amazon.com/neuron: 2}}
YAML
  expect "extended Running with DRA devices" ready extended
  show extended
  echo "    extendedResourceClaimStatus: $(kubectl -n $NS get pod extended -o jsonpath='{.status.extendedResourceClaimStatus}')"

  log "fault: uncorrectable ECC error on device 0 (held by whole-0)"
  local f=$EMU/sys/devices/virtual/neuron_device/neuron0/stats/hardware/mem_ecc_uncorrected
  local pid t0 line
  pid=$(driver_pid)
  line=$(( $(wc -l <"$K/log/neuron-dra.log") + 1 ))
  t0=$(date +%s%N)
  echo $(( $(cat "$f") + 1 )) >"$f"
  expect "taint on neurondevice0 published within 5 s" taint_on_device0
  echo "    taint visible to kubectl after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  expect "whole-0 evicted (NoExecute: the device is broken under it)" gone_or_failed whole-0
  kubectl -n $NS get events --field-selector involvedObject.name=whole-0 -o custom-columns=R:.reason,M:.message --no-headers | tail -3 | sed 's/^/    event: /'
  sleep 5
  expect "the driver still runs (pid $pid)" same_driver "$pid"
  expect "the driver logged no exit" no_exit_lines "$line"
  # A lower counter is a new baseline: the device is healthy again after --healthy-after.
  echo 0 >"$f"
  expect "device 0 untainted again" no_taint_left
  kubectl delete namespace $NS --wait=true >/dev/null
  if [ "$failures" -gt 0 ]; then
    log "gated: $failures expectation(s) failed"
    return 1
  fi
  log "gated: every expectation held"
}

show() { # pod
  local claim devices
  echo "--- pod $1: $(kubectl -n $NS get pod "$1" -o jsonpath='{.status.phase}')"
  kubectl -n $NS logs "$1" 2>/dev/null | sed 's/^/    /' || true
  claim=$(kubectl -n $NS get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  [ -n "$claim" ] || return 0
  devices=$(kubectl -n $NS get resourceclaim "$claim" -o jsonpath='{range .status.allocation.devices.results[*]}{.device}{" "}{end}')
  echo "    claim $claim allocated: $devices"
  for d in $devices; do
    kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json |
      python3 -c "import json,sys; d=sys.argv[1]
for s in json.load(sys.stdin)['items']:
  for x in s['spec'].get('devices',[]):
    if x['name']==d:
      a=x.get('attributes',{}); g=lambda k:list(a.get(k,{}).values())[0] if k in a else '-'
      print('      %s devicegroup4_id=%s devicegroup8_id=%s' % (d, g('resource.aws.com/devicegroup4_id'), g('resource.aws.com/devicegroup8_id')))" "$d"
  done
  kubectl -n $NS get events --field-selector involvedObject.name="$1" -o custom-columns=R:.reason,M:.message --no-headers 2>/dev/null | grep -v -e Scheduled -e Pulled -e Created -e Started | sed 's/^/    event: /' || true
}

test_() {
  kubectl create namespace $NS --dry-run=client -o yaml | kubectl apply -f -
  kubectl apply -f "$ROOT/deploy/dra/deviceclass.yaml"
  # Only the claim templates: the UltraServer examples also hold LeaderWorkerSets, whose CRD
  # this cluster does not have (scripts/real-cluster-ultraserver.sh runs those).
  for f in "$ROOT"/deploy/dra/examples/*.yaml; do
    awk 'BEGIN {RS = "\n---\n"} /\nkind: ResourceClaimTemplate\n/ {print; print "---"}' "$f" |
      kubectl -n $NS apply -f -
  done
  { pod connected-a 1x4-connected-neurons; pod connected-b 1x4-connected-neurons
    pod lnc1-all all-neurons-lnc-1; } | kubectl apply -f -
  kubectl -n $NS wait --for=condition=Ready pod/connected-a pod/connected-b --timeout=120s || true
  sleep 3
  for p in connected-a connected-b lnc1-all; do show $p; done
  log "lnc1-all should wait (its 16 devices are partly taken); deleting the others frees them"
  kubectl -n $NS delete pod connected-a connected-b --wait=true
  kubectl -n $NS wait --for=condition=Ready pod/lnc1-all --timeout=180s || true
  show lnc1-all
  ls -l /var/run/cdi | grep neuron || true
}

clean() {
  kubectl delete namespace $NS --ignore-not-found --wait=true
  for _ in $(seq 1 60); do ls /var/run/cdi 2>/dev/null | grep -q neuron.aws.com || break; sleep 1; done
  ls /var/run/cdi 2>/dev/null | grep neuron.aws.com && log "CDI specs still present" || log "no CDI specs left"
}

stop() {
  local f=$K/run/neuron-dra.pid p
  [ -s "$f" ] || return 0
  p=$(cat "$f")
  if [ -d "/proc/$p" ]; then
    kill -TERM "$p"; for _ in $(seq 1 20); do [ -d "/proc/$p" ] || break; sleep 0.5; done
    log "driver stopped (pid $p)"
  fi
  rm -f "$f"
}

case "${1:-}" in
  driver) driver ;;
  test) test_ ;;
  gated) gated ;;
  clean) clean ;;
  stop) stop ;;
  all) driver; test_ ;;
  *) sed -n '2,23p' "$0"; exit 2 ;;
esac
