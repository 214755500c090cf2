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

gated() {
  kubectl create namespace $NS --dry-run=client -o yaml | kubectl apply -f -
  kubectl apply -f "$ROOT/deploy/dra/deviceclass.yaml" -f "$ROOT/deploy/dra/deviceclass-extended-resource.yaml"
  kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json | python3 -c "
import json,sys
items=json.load(sys.stdin)['items']
devs=[d for s in items for d in s['spec'].get('devices',[])]
print('slices', len(items), 'devices', len(devs), 'of which cores', sum(1 for d in devs if d['name'].count('-core')),
      'counter sets', sum(len(s['spec'].get('sharedCounters',[])) for s in items))"
  kubectl apply -f - <<YAML
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
  { pod core-a one-core; pod core-b one-core; } | kubectl apply -f -
  kubectl -n $NS wait --for=condition=Ready pod/core-a pod/core-b --timeout=120s || true
  pod whole-0 device-0-whole resourceClaimName | kubectl apply -f -
  sleep 5
  for p in core-a core-b whole-0; do show $p; done
  log "whole-0 must wait while core-a/core-b hold cores of device 0; deleting them frees it"
  kubectl -n $NS delete pod core-a core-b --wait=true
  kubectl -n $NS wait --for=condition=Ready pod/whole-0 --timeout=120s || true
  show whole-0

  log "extended resource: a pod asking aws.amazon.com/neuron: 2, no claim in its spec"
  kubectl apply -f - <<YAML
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
  kubectl -n $NS wait --for=condition=Ready pod/extended --timeout=120s || true
  show extended
  kubectl -n $NS get pod extended -o jsonpath='{.status.extendedResourceClaimStatus}'; echo

  log "fault: uncorrectable ECC error on device 0 (held by whole-0)"
  local f=$EMU/sys/devices/virtual/neuron_device/neuron0/stats/hardware/mem_ecc_uncorrected
  local t0; t0=$(date +%s%N)
  echo 1 >"$f"
  for _ in $(seq 1 100); do
    # (not `| grep -q`: under pipefail kubectl's SIGPIPE would fail the test)
    kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json >"$EMU/slices.json"
    grep -q '"neuron.aws.com/unhealthy"' "$EMU/slices.json" && break
    sleep 0.1
  done
  echo "taint visible to kubectl after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o json | python3 -c "
import json,sys
for s in json.load(sys.stdin)['items']:
  for d in s['spec'].get('devices',[]):
    if d.get('taints'): print('   ', d['name'], d['taints'])" >"$EMU/taints.txt"
  head -3 "$EMU/taints.txt"
  sleep 10
  kubectl -n $NS get pods -o wide
  kubectl -n $NS get events --field-selector involvedObject.name=whole-0 -o custom-columns=R:.reason,M:.message --no-headers | tail -3
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
  for f in "$ROOT"/deploy/dra/examples/*.yaml; do kubectl -n $NS apply -f "$f"; done
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
