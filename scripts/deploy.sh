#!/usr/bin/env bash
# The operator's install manifests (kustomize) against the current kubectl context:
#   scripts/deploy.sh render      print them (what `make deploy` applies)
#   scripts/deploy.sh install     the CRDs only (DeviceConfig, the caches), waiting until established
#   scripts/deploy.sh uninstall   every cache and DeviceConfig (the operator cleans up), the CRDs
#   scripts/deploy.sh deploy      the CRDs, then everything else
#   scripts/deploy.sh undeploy    every cache, then every DeviceConfig, then everything deploy
#                                 applied
# Environment: OVERLAY = eks | openshift | emulated | empty (the base, deploy/operator);
#              IMG = the operator image (default: as the manifests say, neuron-operator:dev);
#                    by tag, the sample DeviceConfig's device plugin, extender and node agent
#                    images become <same registry>/neuron-<binary>:<same tag>;
#              KUBECTL = the kubectl to run (default: kubectl);
#              APPLY_FLAGS = extra `kubectl apply` flags (e.g. --server-side);
#              CACHE_WAIT = how long undeploy/uninstall wait for caches to go (default 120s).
# Works with every kustomize from v2.0.3 (kubectl 1.20) on: the image is set by a kustomization
# written on top of the chosen one, since `kubectl kustomize` cannot edit.
set -euo pipefail
cd "$(dirname "$0")/.."
KUBECTL=${KUBECTL:-kubectl}
CRD=deploy/operator/crd-deviceconfigs.yaml
CRD_NAME=deviceconfigs.k8s.aws
CACHE_CRD=deploy/operator/crd-neuroncaches.yaml
CACHE_CRD_NAMES="neuroncaches.k8s.aws clusterneuroncaches.k8s.aws neuroncachenodes.k8s.aws"

base=deploy/operator
if [ -n "${OVERLAY:-}" ]; then
  base=deploy/overlays/$OVERLAY
  if [ ! -f "$base/kustomization.yaml" ]; then
    echo "deploy: no overlay '$OVERLAY' (have: $(ls deploy/overlays | tr '\n' ' '))" >&2
    exit 2
  fi
fi

# kustomize v5 warns that `bases` and `patches*` are old spellings; they are on purpose (v2.0.3).
kustomize() {
  "$KUBECTL" kustomize "$1" 2> >(grep -v "^# Warning: '.*' is deprecated" >&2)
}

render() {
  if [ -z "${IMG:-}" ]; then
    kustomize "$base"
    return
  fi
  # registry/name:tag or registry/name@sha256:... ; a ':' after the last '/' starts the tag.
  local name=$IMG tag="" digest=""
  case $IMG in
    *@*) name=${IMG%@*} digest=${IMG#*@} ;;
    *) if [[ ${IMG##*/} == *:* ]]; then name=${IMG%:*} tag=${IMG##*:}; fi ;;
  esac
  local dir
  dir=build/deploy/$(basename "$base")
  mkdir -p "$dir"
  {
    echo "# Written by scripts/deploy.sh: $base with the operator image $IMG."
    echo "bases:"
    echo "  - $(realpath --relative-to="$dir" "$base")"
    echo "images:"
    echo "  - name: neuron-operator"
    echo "    newName: $name"
    [ -n "$tag" ] && echo "    newTag: \"$tag\""
    [ -n "$digest" ] && echo "    digest: $digest"
    # By tag, the DeviceConfig runs the other images from the same registry and tag (a digest
    # is one image's: set theirs in the DeviceConfig yourself).
    if [ -n "$tag" ]; then
      echo "patchesStrategicMerge:"
      echo "  - component-images.yaml"
    fi
  } > "$dir/kustomization.yaml"
  if [ -n "$tag" ]; then
    local registry=""
    [[ $name == */* ]] && registry=${name%/*}/
    cat > "$dir/component-images.yaml" <<EOF
apiVersion: k8s.aws/v1beta1
kind: DeviceConfig
metadata:
  name: neuron
  namespace: aws-neuron-operator
spec:
  devicePluginImage: ${registry}neuron-device-plugin:$tag
  schedulerExtensionImage: ${registry}neuron-scheduler-extender:$tag
  nodeAgentImage: ${registry}neuron-node-agent:$tag
EOF
  else
    rm -f "$dir/component-images.yaml"
  fi
  kustomize "$dir"
}

apply() {
  # shellcheck disable=SC2086  # APPLY_FLAGS is a list of flags
  "$KUBECTL" apply ${APPLY_FLAGS:-} -f "$1"
}

install_crd() {
  apply "$CRD"
  apply "$CACHE_CRD"
  local name
  for name in $CRD_NAME $CACHE_CRD_NAMES; do
    "$KUBECTL" wait --for condition=established --timeout=60s "crd/$name"
  done
}

# A NeuronCache or ClusterNeuronCache carries the operator's in-use finalizer while any pod on any
# node mounts it; the operator drops it once none does. So caches go first, while the operator
# still runs, and we wait (CACHE_WAIT, bounded) for them to be gone. If pods still use them then,
# we stop here and say which caches and why, rather than remove the operator and leave caches
# (and their CRDs) stuck behind a finalizer nobody will release.
# wait_gone RESOURCE [FLAGS]: every object of RESOURCE gone within $cache_wait (kubectl wait
# fails on "no matching resources", so an empty list counts as gone, before and after).
wait_gone() {
  local resource=$1
  shift
  none() { [ -z "$("$KUBECTL" get "$resource" "$@" -o name 2>/dev/null)" ]; }
  none "$@" && return 0
  "$KUBECTL" wait --for=delete "$resource" --all "$@" --timeout="$cache_wait" >/dev/null 2>&1 ||
    none "$@"
}

delete_caches() {
  "$KUBECTL" get crd neuroncaches.k8s.aws >/dev/null 2>&1 || return 0
  cache_wait=${CACHE_WAIT:-120s}
  "$KUBECTL" delete neuroncaches --all --all-namespaces --wait=false
  "$KUBECTL" delete clusterneuroncaches --all --wait=false
  echo "deploy: waiting up to $cache_wait for NeuronCaches and ClusterNeuronCaches to go (each once no" \
    "pod uses it, when the operator releases its finalizer)"
  if ! wait_gone neuroncaches --all-namespaces || ! wait_gone clusterneuroncaches; then
    echo "deploy: caches still in use after $cache_wait (delete the pods that mount them, or raise" \
      "CACHE_WAIT, then run again); nothing else was deleted:" >&2
    "$KUBECTL" get neuroncaches --all-namespaces \
      -o 'custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,WAITING:.status.conditions[?(@.type=="Deleting")].message' >&2 || true
    "$KUBECTL" get clusterneuroncaches \
      -o 'custom-columns=NAME:.metadata.name,WAITING:.status.conditions[?(@.type=="Deleting")].message' >&2 || true
    exit 1
  fi
}

# Deleting a DeviceConfig makes the operator remove what it created (its finalizer holds the
# object until then): so DeviceConfigs go first, while the operator still runs.
delete_device_configs() {
  if "$KUBECTL" get crd "$CRD_NAME" >/dev/null 2>&1; then
    "$KUBECTL" delete deviceconfigs --all --all-namespaces --wait --timeout=5m
  fi
}

# The base's NodeFeatureRule needs Node Feature Discovery; say so before applying half a stack.
# Asks for NFD's CRD itself: API discovery (`kubectl api-resources`) can come back empty for a
# few seconds after any CRD changes, and even `get crd` needs discovery to resolve "crd". So only
# the server's NotFound is taken as an answer; any other failure is asked again (5 tries, ~8 s).
nfd_group() {
  if [ "${OVERLAY:-}" = openshift ]; then echo nfd.openshift.io; else echo nfd.k8s-sigs.io; fi
}

check_nfd() {
  local group
  group=$(nfd_group)
  local crd=nodefeaturerules.$group err="" try
  for try in 1 2 3 4 5; do
    if err=$("$KUBECTL" get crd "$crd" -o name 2>&1 >/dev/null); then
      # Served once established (a CRD created a moment ago may not be yet).
      "$KUBECTL" wait --for condition=established --timeout=30s "crd/$crd" >/dev/null
      return
    fi
    if [[ $err == *"(NotFound)"* ]]; then
      echo "deploy: $group NodeFeatureRule is not served (no CRD $crd): install Node Feature" \
        "Discovery first (README, Install)" >&2
      exit 1
    fi
    if [ "$try" -lt 5 ]; then sleep 2; fi
  done
  echo "deploy: cannot tell whether $group NodeFeatureRule is served: \`kubectl get crd $crd\`" \
    "failed 5 times, last with: $err" >&2
  exit 1
}

# Called as out=$(manifests): errexit does not reach into a command substitution, so a failed
# render exits it explicitly (and the caller stops) rather than applying a half-written file.
manifests() {
  local out=build/deploy/manifests.yaml
  mkdir -p build/deploy
  render > "$out" || exit 1
  echo "$out"
}

case ${1:-} in
  render) render ;;
  install) install_crd ;;
  uninstall)
    delete_caches
    delete_device_configs
    "$KUBECTL" delete --ignore-not-found -f "$CACHE_CRD"
    "$KUBECTL" delete --ignore-not-found -f "$CRD"
    ;;
  deploy)
    out=$(manifests)
    # Only a stack with the NFD rule needs NFD (the emulated overlay has none).
    if grep -q '^kind: NodeFeatureRule$' "$out"; then check_nfd; fi
    install_crd
    apply "$out"
    ;;
  undeploy)
    out=$(manifests)
    delete_caches
    delete_device_configs
    # Where NFD is not installed (an emulated stack, undeployed without OVERLAY=emulated) no
    # NodeFeatureRule can exist, and kubectl fails on a kind it cannot map after deleting the
    # rest: leave the rule out.
    nfd=$("$KUBECTL" get crd "nodefeaturerules.$(nfd_group)" -o name 2>&1 || true)
    if grep -q '^kind: NodeFeatureRule$' "$out" && [[ $nfd == *"(NotFound)"* ]]; then
      awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } !/(^|\n)kind: NodeFeatureRule\n/' "$out" \
        > build/deploy/manifests-without-nfd.yaml
      out=build/deploy/manifests-without-nfd.yaml
    fi
    "$KUBECTL" delete --ignore-not-found -f "$out"
    ;;
  *)
    echo "usage: scripts/deploy.sh render|install|uninstall|deploy|undeploy" \
      "(env OVERLAY=eks|openshift|emulated, IMG=image)" >&2
    exit 2
    ;;
esac
