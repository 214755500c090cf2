#!/usr/bin/env bash
# real-cluster-ultraserver.sh: UltraServer jobs through our DRA driver under the REAL kube-scheduler
# of ../shared/real-cluster (Kubernetes 1.34, cluster-1.34.sh start). CI cannot run this.
#
# Two emulated Trn2 UltraServers of four trn2u.48xlarge nodes each: node-1 (the real kubelet) is
# node 0 of UltraServer us-a; us-a-1..3 and us-b-0..3 are Nodes registered without a kubelet.
# Every node gets its own node agent (which labels it with AWS's UltraServer labels) and its own
# DRA driver instance (which publishes its ResourceSlice with the neuron_node device), each started
# with --node-name and --emulate-ultraserver=<us>:<node>. Pods on nodes without a kubelet are
# scheduled and their claims allocated, but never run; the pods on node-1 run and print their env.
#
#   real-cluster-ultraserver.sh start   nodes, agents and drivers; waits for labels and slices
#   real-cluster-ultraserver.sh test    AWS's 4-node and 2-node claim templates with
#                                       LeaderWorkerSet-style groups (the exclusive-topology
#                                       affinity LWS injects, written out: LWS is not installed):
#                                       two 4-node groups, then four 2-node groups and a fifth
#                                       that must wait; checks every placement and node-1's env
#   real-cluster-ultraserver.sh clean   delete the test objects
#   real-cluster-ultraserver.sh stop    stop agents and drivers, delete the fake nodes
#   real-cluster-ultraserver.sh all     start + test
# Environment: K8S_HOME (/opt/k8s-1.34), KUBELET_ROOT (/var/lib/kubelet-1.34), BIN_DIR (build/bin),
# IMAGE (local/busybox:1.35), DRIVER_ARGS (extra driver flags).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${K8S_HOME:-/opt/k8s-1.34}
KROOT=${KUBELET_ROOT:-/var/lib/kubelet-1.34}
BIN_DIR=${BIN_DIR:-$ROOT/build/bin}
IMAGE=${IMAGE:-local/busybox:1.35}
DRIVER_ARGS=${DRIVER_ARGS:-}
SHAPE=trn2u.48xlarge
NS=neuron-us-test
WORK=/var/lib/neuron-ultraserver-test
RUN=$K/run/ultraserver
export KUBECONFIG=$K/admin.kubeconfig PATH=$K/bin:$PATH
log() { echo "[$(date +%H:%M:%S)] $*"; }
die() { echo "real-cluster-ultraserver: $*" >&2; exit 1; }

# node name -> "<ultraserver>:<node id>"
declare -A US=([node-1]=us-a:0 [us-a-1]=us-a:1 [us-a-2]=us-a:2 [us-a-3]=us-a:3
               [us-b-0]=us-b:0 [us-b-1]=us-b:1 [us-b-2]=us-b:2 [us-b-3]=us-b:3)
NODES=(node-1 us-a-1 us-a-2 us-a-3 us-b-0 us-b-1 us-b-2 us-b-3)

fake_node() { # name
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {node.kubernetes.io/instance-type: $SHAPE, kubernetes.io/hostname: $1, fake: "true"}
YAML
  kubectl patch node "$1" --subresource=status --type=merge -p '{"status":{
    "capacity":{"cpu":"192","memory":"2Ti","pods":"110"},
    "allocatable":{"cpu":"192","memory":"2Ti","pods":"110"},
    "conditions":[{"type":"Ready","status":"True","reason":"Fake","message":"registered without a kubelet","lastHeartbeatTime":"'"$(date -u +%FT%TZ)"'","lastTransitionTime":"'"$(date -u +%FT%TZ)"'"}]}}' >/dev/null
}

spawn() { # pidfile logfile command...
  local pidf=$1 logf=$2; shift 2
  if [ -s "$pidf" ] && [ -d "/proc/$(cat "$pidf")" ]; then return 0; fi
  echo "=== $(date -u +%FT%TZ) start: $*" >>"$logf"
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidf" "$@" >>"$logf" 2>&1 </dev/null &
}

start() {
  [ -x "$BIN_DIR/neuron-device-plugin" ] && [ -x "$BIN_DIR/neuron-node-agent" ] || die "build first (make build)"
  kubectl get --raw /apis/resource.k8s.io/v1 >/dev/null || die "start the 1.34 cluster first"
  mkdir -p "$RUN" "$K/log" "$WORK"
  local port=9500
  for n in "${NODES[@]}"; do
    [ "$n" = node-1 ] || fake_node "$n"
    local d=$WORK/$n reg plugins state cdi
    mkdir -p "$d/agent-emu" "$d/driver-emu"
    if [ "$n" = node-1 ]; then
      reg=$KROOT/plugins_registry plugins=$KROOT/plugins state=$KROOT/plugins/neuron.aws.com cdi=/var/run/cdi
    else
      reg=$d/registry plugins=$d/plugins state=$d/state cdi=$d/cdi
    fi
    mkdir -p "$reg" "$plugins" "$state" "$cdi"
    spawn "$RUN/agent-$n.pid" "$K/log/us-agent-$n.log" "$BIN_DIR/neuron-node-agent" \
      --node-name="$n" --kubeconfig="$KUBECONFIG" --emulate=$SHAPE --emulate-dir="$d/agent-emu" \
      --emulate-ultraserver="${US[$n]}" --listen=127.0.0.1:$port
    # shellcheck disable=SC2086
    spawn "$RUN/driver-$n.pid" "$K/log/us-driver-$n.log" "$BIN_DIR/neuron-device-plugin" --api=dra \
      --node-name="$n" --kubeconfig="$KUBECONFIG" --emulate=$SHAPE --emulate-dir="$d/driver-emu" \
      --emulate-ultraserver="${US[$n]}" --kubelet-registrar-dir="$reg" --kubelet-plugins-dir="$plugins" \
      --cdi-root="$cdi" --dra-state-dir="$state" --metrics-listen=127.0.0.1:$((port + 1)) $DRIVER_ARGS
    port=$((port + 2))
  done
  log "8 agents and 8 drivers started (logs $K/log/us-*.log)"
  for _ in $(seq 1 120); do
    local labelled slices
    labelled=$(kubectl get nodes -l neuron.amazonaws.com/ultraserver-server-id-4 -o name | wc -l)
    slices=$(kubectl get resourceslices --field-selector spec.driver=neuron.aws.com -o name | wc -l)
    if [ "$labelled" -ge 8 ] && [ "$slices" -ge 8 ]; then break; fi
    sleep 1
  done
  kubectl get nodes -l neuron.amazonaws.com/ultraserver-mode \
    -o=custom-columns='NAME:metadata.name,MODE:metadata.labels.neuron\.amazonaws\.com/ultraserver-mode,SERVER_ID_2:metadata.labels.neuron\.amazonaws\.com/ultraserver-server-id-2,NODE_ID_2:metadata.labels.neuron\.amazonaws\.com/ultraserver-node-id-2,SERVER_ID_4:metadata.labels.neuron\.amazonaws\.com/ultraserver-server-id-4,NODE_ID_4:metadata.labels.neuron\.amazonaws\.com/ultraserver-node-id-4'
  [ "$(kubectl get nodes -l neuron.amazonaws.com/ultraserver-server-id-4 -o name | wc -l)" -ge 8 ] ||
    die "not every node is labelled; see $K/log/us-agent-*.log"
  log "every node labelled and every driver published its slice"
  # node-1's driver must also be registered with the real kubelet before a pod there can start
  # (its /readyz on the first metrics port); the kubelet can take a minute or two to get to it.
  for _ in $(seq 1 240); do
    if curl -fsS http://127.0.0.1:9501/readyz >/dev/null 2>&1; then
      log "node-1's driver registered with the kubelet"
      return 0
    fi
    sleep 1
  done
  die "node-1's driver not registered with the kubelet after 240 s; see $K/log/us-driver-node-1.log"
}

# A LeaderWorkerSet-style group member: the labels LWS gives its pods and the affinity its webhook
# injects for leaderworkerset.sigs.k8s.io/exclusive-topology: <key> (same group on one domain,
# no other group there).
member() { # group index size topology-key template
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1-$2
  namespace: $NS
  labels: {leaderworkerset.sigs.k8s.io/group-key: $1, leaderworkerset.sigs.k8s.io/worker-index: "$2"}
  annotations: {leaderworkerset.sigs.k8s.io/size: "$3", leaderworkerset.sigs.k8s.io/exclusive-topology: $4}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  tolerations: [{operator: Exists}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchExpressions: [{key: leaderworkerset.sigs.k8s.io/group-key, operator: In, values: [$1]}]}
        topologyKey: $4
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchExpressions: [{key: leaderworkerset.sigs.k8s.io/group-key, operator: Exists}, {key: leaderworkerset.sigs.k8s.io/group-key, operator: NotIn, values: [$1]}]}
        topologyKey: $4
  containers:
  - name: c
    image: $IMAGE
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "busybox env | busybox sort | busybox grep ^NEURON_; busybox sleep 3600"]
    resources: {claims: [{name: one-node-from-ultraserver}]}
  resourceClaims:
  - {name: one-node-from-ultraserver, resourceClaimTemplateName: $5}
---
YAML
}

group() { # group size template
  local key=neuron.amazonaws.com/ultraserver-server-id-$2
  for i in $(seq 0 $(($2 - 1))); do member "$1" "$i" "$2" "$key" "$3"; done | kubectl apply -f - >/dev/null
}

failures=0
expect() { # description command...
  local what=$1; shift
  if "$@"; then log "PASS: $what"; else log "FAIL: $what"; failures=$((failures + 1)); fi
}

bound_count() { kubectl -n $NS get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
wait_bound() { # count
  for _ in $(seq 1 120); do [ "$(bound_count)" -ge "$1" ] && return 0; sleep 1; done
  return 1
}

# Every group on one set of its size, no two groups on one set, each claim holding the
# neuron_node device of its pod's node. Prints the placement.
placement_ok() { # size
  kubectl get nodes -o json >"$WORK/nodes.json"
  kubectl -n $NS get pods,resourceclaims -o json >"$WORK/objs.json"
  python3 - "$1" "$WORK/nodes.json" "$WORK/objs.json" <<'PY'
import json, sys
size = sys.argv[1]
key = "neuron.amazonaws.com/ultraserver-server-id-" + size
nodes = {n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in json.load(open(sys.argv[2]))["items"]}
items = json.load(open(sys.argv[3]))["items"]
pods = [o for o in items if o["kind"] == "Pod" and o["spec"].get("nodeName")]
claims = {o["metadata"]["name"]: o for o in items if o["kind"] == "ResourceClaim"}
groups, ok = {}, True
for p in pods:
    g = p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-key"]
    node = p["spec"]["nodeName"]
    groups.setdefault(g, []).append((p["metadata"]["name"], node, nodes[node].get(key, "?")))
    for st in p.get("status", {}).get("resourceClaimStatuses", []):
        c = claims.get(st.get("resourceClaimName", ""))
        res = (c or {}).get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
        if [(r["pool"], r["device"]) for r in res] != [(node, "neuronnode")]:
            print("  claim of", p["metadata"]["name"], "holds", [(r["pool"], r["device"]) for r in res]); ok = False
sets = {}
for g, members in sorted(groups.items()):
    ids = {m[2] for m in members}
    print(f"  {g}: " + ", ".join(f"{m[0]}@{m[1]}" for m in sorted(members)) + f"  {key.split('/')[1]}={sorted(ids)}")
    if len(ids) != 1 or len(members) != int(size) or len({m[1] for m in members}) != len(members):
        ok = False
    for i in ids:
        if i in sets: print("  set", i, "shared by", sets[i], "and", g); ok = False
        sets[i] = g
sys.exit(0 if ok else 1)
PY
}

env_of_node1() { # expected mode node-id
  local pod out
  pod=$(kubectl -n $NS get pods --field-selector spec.nodeName=node-1 -o jsonpath='{.items[0].metadata.name}')
  [ -n "$pod" ] || { echo "  no pod on node-1"; return 1; }
  kubectl -n $NS wait --for=condition=Ready "pod/$pod" --timeout=120s >/dev/null || { echo "  $pod not running"; return 1; }
  out=$(kubectl -n $NS logs "$pod")
  echo "$out" | sed "s/^/  $pod: /"
  grep -qx "NEURON_RT_ULTRASERVER_MODE=$1" <<<"$out" && grep -qx "NEURON_RT_ULTRASERVER_NODE_ID=$2" <<<"$out" &&
    grep -qx "NEURON_GLOBAL_TOPOID=$2" <<<"$out" && grep -qx "NEURON_GLOBAL_TOPOID0_HOST=node-1" <<<"$out" &&
    grep -q "^NEURON_RT_ULTRASERVER_SERVER_ID=$(kubectl get node node-1 -o jsonpath="{.metadata.labels.neuron\.amazonaws\.com/ultraserver-server-id-$3}")\$" <<<"$out"
}

pending_stays() { # pod: unscheduled after 15 s
  sleep 15
  [ -z "$(kubectl -n $NS get pod "$1" -o jsonpath='{.spec.nodeName}')" ]
}

reset_ns() {
  kubectl -n $NS delete pods --all --force --grace-period=0 >/dev/null 2>&1 || true
  kubectl delete namespace $NS --ignore-not-found --wait=true >/dev/null
  kubectl create namespace $NS >/dev/null
  kubectl apply -f "$ROOT/deploy/dra/deviceclass.yaml" >/dev/null
  # The claim templates of AWS's examples (the LeaderWorkerSets in them need LWS, not installed).
  kubectl -n $NS apply -f - >/dev/null < <(python3 -c 'import sys
for f in sys.argv[1:]:
    docs=open(f).read().split("\n---\n")
    print("\n---\n".join(d for d in docs if "kind: ResourceClaimTemplate" in d)); print("---")' \
    "$ROOT/deploy/dra/examples/4-node-inference-us.yaml" "$ROOT/deploy/dra/examples/2-node-inference-us.yaml")
}

test_all() {
  failures=0
  reset_ns
  log "two 4-node groups (us-4-node-config, exclusive topology ultraserver-server-id-4)"
  group job-a 4 us-4-node-config
  group job-b 4 us-4-node-config
  expect "8 pods scheduled" wait_bound 8
  expect "each 4-node group on one UltraServer, none shared" placement_ok 4
  expect "node-1's pod runs with X4 env (mode 1, its node id 0, rank 0)" env_of_node1 1 0 4
  reset_ns
  log "four 2-node groups (us-2-node-config, ultraserver-server-id-2) and a fifth"
  for g in pair-a pair-b pair-c pair-d; do group $g 2 us-2-node-config; done
  expect "8 pods scheduled" wait_bound 8
  expect "each 2-node group on one pair, none shared" placement_ok 2
  expect "node-1's pod runs with X2H env (mode 2, node id 0, rank 0)" env_of_node1 2 0 2
  group pair-e 2 us-2-node-config
  expect "a fifth 2-node group waits: no pair is free" pending_stays pair-e-0
  kubectl -n $NS get pods -o wide | sed 's/^/  /'
  if [ "$failures" -gt 0 ]; then log "$failures check(s) FAILED"; exit 1; fi
  log "all checks passed"
}

clean() {
  kubectl -n $NS delete pods --all --force --grace-period=0 >/dev/null 2>&1 || true
  kubectl delete namespace $NS --ignore-not-found --wait=true >/dev/null
}

stop() {
  for f in "$RUN"/*.pid; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
  kubectl delete nodes -l fake=true --ignore-not-found >/dev/null || true
  log "agents and drivers stopped, fake nodes deleted"
}

case "${1:-all}" in
  start) start ;;
  test) test_all ;;
  clean) clean ;;
  stop) stop ;;
  all) start; test_all ;;
  *) die "usage: $0 start|test|clean|stop|all" ;;
esac
