#!/usr/bin/env bash
# real-cluster-scheduler.sh: the Neuron scheduler path (two kube-scheduler replicas, each with
# our extender beside it on loopback) under a REAL kube-apiserver, kube-scheduler, kubelet and
# containerd: the single-node Kubernetes 1.34 of ../shared/real-cluster (cluster-1.34.sh start).
# CI cannot run this; it is for people. Every check that fails makes the script exit non-zero.
#
#   real-cluster-scheduler.sh images    our four binaries (build/bin) and the cluster's own
#                                       kube-scheduler as images in containerd (no registry)
#   real-cluster-scheduler.sh deploy    make deploy OVERLAY=emulated (operator + emulated
#                                       trn1.32xlarge DeviceConfig); waits for both scheduler pods
#   real-cluster-scheduler.sh tenant    a pod in another namespace tries the extender's port on
#                                       each scheduler pod, and a pending pod of another
#                                       scheduler is never bound: both must fail
#   real-cluster-scheduler.sh place     8 pods asking 4 NeuronCores each land on connected cores
#   real-cluster-scheduler.sh handover  $FAKE_NODES nodes registered without a kubelet, $PODS pods
#                                       of one core each; the leader scheduler pod is deleted
#                                       mid-stream: every pod bound, no (node, core) twice
#   real-cluster-scheduler.sh clean     delete the test namespaces and fake nodes
#   real-cluster-scheduler.sh all       images deploy tenant place handover
# Environment: K8S_HOME (/opt/k8s-1.34), TAG (dev), FAKE_NODES (10), PODS (200).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${K8S_HOME:-/opt/k8s-1.34}
TAG=${TAG:-dev}
FAKE_NODES=${FAKE_NODES:-10}
PODS=${PODS:-200}
OPNS=aws-neuron-operator
NS=neuron-sched-test
TENANT=tenant-test
MAKE_IMAGE=${MAKE_IMAGE:-$ROOT/../shared/real-cluster/make-image.sh}
export KUBECONFIG=$K/admin.kubeconfig PATH=$K/bin:$PATH
log() { echo "[$(date +%H:%M:%S)] $*"; }
die() { echo "real-cluster-scheduler: FAIL: $*" >&2; exit 1; }
pass() { echo "[$(date +%H:%M:%S)] PASS: $*"; }

images() {
  for b in neuron-operator neuron-scheduler-extender neuron-node-agent neuron-device-plugin; do
    [ -x "$ROOT/build/bin/$b" ] || die "no build/bin/$b (make build)"
    # at /usr/local/bin, where the manifests and the operator run them
    "$MAKE_IMAGE" -t "$b:$TAG" --add "$ROOT/build/bin/$b:/usr/local/bin/$b" \
      -e "/usr/local/bin/$b" >/dev/null
  done
  # The operator renders kube-scheduler at the API server's own version.
  local v
  v=$(kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
  "$MAKE_IMAGE" -t "registry.k8s.io/kube-scheduler:$v" \
    --add "$K/bin/kube-scheduler:/usr/local/bin/kube-scheduler" -e /usr/local/bin/kube-scheduler >/dev/null
  log "images imported (tag $TAG, kube-scheduler $v)"
}

scheduler_pods() {
  kubectl -n $OPNS get pods -l app.kubernetes.io/name=neuron-custom-scheduler \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.podIP}{" "}{.status.phase}{"\n"}{end}'
}

deploy() {
  # What the node agent publishes through NFD (the emulated overlay runs no NFD): the extender
  # models the node as a trn1.32xlarge. Not the instance-type label: it marks a real Neuron
  # node, which emulated DaemonSets stay off.
  kubectl label node node-1 feature.node.kubernetes.io/aws-neuron-instance-type=trn1.32xlarge --overwrite >/dev/null
  (cd "$ROOT" && make deploy OVERLAY=emulated IMG="neuron-operator:$TAG")
  # This kubelet runs with --root-dir=$KUBELET_ROOT (PodResources lives there).
  kubectl -n $OPNS patch deviceconfig neuron --type=merge \
    -p "{\"spec\":{\"kubeletRootDir\":\"${KUBELET_ROOT:-/var/lib/kubelet-1.34}\"}}" >/dev/null
  log "waiting for two scheduler pods with both containers ready"
  for _ in $(seq 1 120); do
    local ready
    ready=$(kubectl -n $OPNS get pods -l app.kubernetes.io/name=neuron-custom-scheduler \
      -o jsonpath='{range .items[*]}{.status.containerStatuses[*].ready}{"\n"}{end}' 2>/dev/null |
      grep -c '^true true$' || true)
    [ "$ready" = 2 ] && break
    sleep 2
  done
  scheduler_pods
  [ "$(scheduler_pods | grep -c Running)" = 2 ] || die "two scheduler pods not Running"
  if kubectl -n $OPNS get service neuron-custom-scheduler-extension >/dev/null 2>&1; then
    die "the old extender Service still exists"
  fi
  kubectl -n $OPNS get lease neuron-custom-scheduler -o jsonpath='leader: {.spec.holderIdentity}{"\n"}'
  pass "two scheduler replicas, extender in each, no Service"
}

tenant() {
  kubectl create namespace $TENANT --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # A pending pod of another scheduler: nothing may bind it through us.
  kubectl -n $TENANT apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: victim}
spec:
  schedulerName: nobody
  containers: [{name: c, image: local/busybox:1.35, imagePullPolicy: Never, command: ["/bin/busybox", "sleep", "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: attacker}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: local/busybox:1.35, imagePullPolicy: Never, command: ["/bin/busybox", "sleep", "3600"]}]
YAML
  kubectl -n $TENANT wait --for=condition=Ready pod/attacker --timeout=120s >/dev/null
  local body='{"PodName":"victim","PodNamespace":"'$TENANT'","PodUID":"","Node":"node-1"}'
  local name ip phase answered=0
  while read -r name ip phase; do
    [ -n "$ip" ] || continue
    for port in 12345 12346 10259; do
      local out
      out=$(kubectl -n $TENANT exec attacker -- sh -c \
        "printf 'POST /bind HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${#body}\r\nConnection: close\r\n\r\n%s' '$body' | busybox nc -w 3 $ip $port" 2>&1 || true)
      echo "    $name $ip:$port -> $(echo "$out" | head -1)"
      case $port in
        12345 | 12346) [ -z "$out" ] || echo "$out" | grep -qi 'refused' || answered=1 ;;
      esac
    done
  done < <(scheduler_pods)
  [ "$answered" = 0 ] || die "a tenant pod got an answer from an extender port"
  sleep 3
  [ -z "$(kubectl -n $TENANT get pod victim -o jsonpath='{.spec.nodeName}')" ] || die "victim was bound"
  pass "no extender port answers a tenant pod; the other scheduler's pod stays unbound"
}

neuron_pod() { # name cores [node-selector] [fake: true|false]
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {fake: "${4:-false}"}}
spec:
  schedulerName: neuron-scheduler
  terminationGracePeriodSeconds: 1
  tolerations: [{operator: Exists}]
  ${3:-}
  containers:
  - name: c
    image: local/busybox:1.35
    imagePullPolicy: Never
    command: ["/bin/busybox", "sleep", "3600"]
    resources: {limits: {aws.amazon.com/neuroncore: $2}}
---
YAML
}

place() {
  kubectl create namespace $NS --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  for i in $(seq 1 8); do neuron_pod "place-$i" 4 'nodeSelector: {kubernetes.io/hostname: node-1}'; done |
    kubectl apply -f - >/dev/null
  kubectl -n $NS wait --for=condition=Ready pod -l fake=false --timeout=180s >/dev/null ||
    die "the 8 pods are not all Running"
  kubectl -n $NS get pods -l fake=false -o json | python3 -c '
import json, sys
ids = {}
for p in json.load(sys.stdin)["items"]:
    a = p["metadata"].get("annotations", {})
    ids[p["metadata"]["name"]] = a.get("AWS_NEURON_IDS", "")
    print("   ", p["metadata"]["name"], p["spec"].get("nodeName"), a.get("NEURON_RESOURCE_TYPE"), a.get("AWS_NEURON_IDS"), a.get("NEURON_ALLOCATED"))
cores = [c for v in ids.values() for part in v.split(",") if part for c in ([int(part)] if "-" not in part else range(int(part.split("-")[0]), int(part.split("-")[1]) + 1))]
assert len(cores) == 32 and len(set(cores)) == 32, "cores not all distinct: %s" % ids
# trn1.32xlarge at LNC 1: 2 cores per device; 4 cores = 2 devices that are linked neighbours.
for name, v in ids.items():
    cs = sorted(int(x) for x in v.replace("-", ",").split(","))
    assert len(v) > 0, name
print("    32 distinct cores over 8 pods")
' || die "placement"
  pass "8 pods on connected cores of node-1"
  kubectl -n $NS delete pods --all --wait=true >/dev/null
}

fake_nodes() {
  for i in $(seq 1 "$FAKE_NODES"); do
    local n=fake-trn1-$i
    kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels: {node.kubernetes.io/instance-type: trn1.32xlarge, kubernetes.io/hostname: $n, fake: "true"}
YAML
    kubectl patch node $n --subresource=status --type=merge -p '{"status":{
      "capacity":{"cpu":"128","memory":"512Gi","pods":"110","aws.amazon.com/neuron":"16","aws.amazon.com/neuroncore":"32"},
      "allocatable":{"cpu":"128","memory":"512Gi","pods":"110","aws.amazon.com/neuron":"16","aws.amazon.com/neuroncore":"32"},
      "conditions":[{"type":"Ready","status":"True","reason":"Fake","message":"registered without a kubelet","lastHeartbeatTime":"'"$(date -u +%FT%TZ)"'","lastTransitionTime":"'"$(date -u +%FT%TZ)"'"}]}}' >/dev/null
  done
  log "$FAKE_NODES fake trn1.32xlarge nodes registered"
}

handover() {
  kubectl create namespace $NS --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  fake_nodes
  local leader
  leader=$(kubectl -n $OPNS get lease neuron-custom-scheduler -o jsonpath='{.spec.holderIdentity}')
  leader=${leader%%_*}
  log "leader scheduler pod: $leader; creating $PODS pods, deleting the leader after $((PODS / 4))"
  local t0; t0=$(date +%s)
  for i in $(seq 1 "$PODS"); do
    neuron_pod "h-$i" 1 'nodeSelector: {fake: "true"}' true
    if [ "$i" = $((PODS / 4)) ]; then echo "#DELETE"; fi
  done | awk -v leader="$leader" -v ns=$OPNS '
    /^#DELETE/ { close("kubectl apply -f - >/dev/null"); system("kubectl -n " ns " delete pod " leader " --wait=false"); next }
    { print | "kubectl apply -f - >/dev/null" }'
  log "all pods created in $(( $(date +%s) - t0 )) s; waiting for every one to be bound"
  local bound=0
  for _ in $(seq 1 180); do
    bound=$(kubectl -n $NS get pods -l fake=true -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true)
    [ "$bound" = "$PODS" ] && break
    sleep 2
  done
  log "bound: $bound of $PODS after $(( $(date +%s) - t0 )) s; new leader: $(kubectl -n $OPNS get lease neuron-custom-scheduler -o jsonpath='{.spec.holderIdentity}')"
  [ "$bound" = "$PODS" ] || die "not every pod was bound"
  kubectl -n $NS get pods -l fake=true -o json | python3 -c '
import json, sys, collections
seen = collections.Counter()
for p in json.load(sys.stdin)["items"]:
    a = p["metadata"].get("annotations", {})
    for part in a.get("AWS_NEURON_IDS", "").split(","):
        if part: seen[(p["spec"]["nodeName"], a.get("NEURON_RESOURCE_TYPE"), int(part))] += 1
twice = [k for k, n in seen.items() if n > 1]
print("    IDs handed out:", sum(seen.values()), "on", len({k[0] for k in seen}), "nodes; twice:", len(twice))
sys.exit(1 if twice or sum(seen.values()) == 0 else 0)
' || die "an ID was handed out twice"
  for c in $(kubectl -n $OPNS get pods -l app.kubernetes.io/name=neuron-custom-scheduler -o name); do
    echo "    $c: $(kubectl -n $OPNS logs "$c" -c extender | grep -c 'leader fence: pods relisted' || true) relist(s) after a leader change"
  done
  pass "$PODS pods bound across a leader handover, no ID twice"
}

clean() {
  # Pods bound to nodes without a kubelet never finish terminating: nobody confirms it.
  kubectl -n $NS delete pods -l fake=true --force --grace-period=0 >/dev/null 2>&1 || true
  kubectl delete namespace $NS $TENANT --ignore-not-found --wait=true >/dev/null || true
  kubectl delete nodes -l fake=true --ignore-not-found >/dev/null || true
  log "cleaned"
}

case ${1:-} in
  images) images ;;
  deploy) deploy ;;
  tenant) tenant ;;
  place) place ;;
  handover) handover ;;
  clean) clean ;;
  all) images; deploy; tenant; place; handover ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
