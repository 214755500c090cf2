#!/usr/bin/env bash
# make install / deploy / undeploy / uninstall (scripts/deploy.sh) with the real kubectl against
# the fake kube-apiserver: the refusal without NFD (at once on NotFound; after bounded retries
# when kubectl gets no answer), deploying through discovery churn, the image override, each
# overlay's objects landing (the emulated one without NFD), caches deleted first (and undeploy
# stopping while one is held), DeviceConfigs before the rest, nothing left behind.
#   tests/integration/deploy_script_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1
bin=$2
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin/fake-apiserver" --listen 127.0.0.1:0 > "$work/apiserver.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/apiserver.log" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "FAIL fake-apiserver did not start"; cat "$work/apiserver.log"; exit 1; }
cat > "$work/kubeconfig" <<EOC
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "$url"}}]
contexts: [{name: fake, context: {cluster: fake, user: test}}]
users: [{name: test, user: {}}]
current-context: fake
EOC
export KUBECONFIG=$work/kubeconfig
# kubectl before 1.29 validates against /openapi/v2, which the fake does not serve (see
# fake_apiserver_kubectl_test): old clients apply without client-side validation.
minor=$(kubectl version --client -o json | grep -o '"minor": *"[0-9]*' | grep -o '[0-9]*$')
validate=""
if [ "${minor:-99}" -lt 29 ]; then validate=--validate=false; fi
export APPLY_FLAGS=$validate

failures=0
expect() {  # expect DESCRIPTION ACTUAL EXPECTED
  if [ "$2" == "$3" ]; then
    echo "ok   $1"
  else
    echo "FAIL $1: got '$2', want '$3'"
    failures=$((failures + 1))
  fi
}
deploy() { bash "$src/scripts/deploy.sh" "$@" > "$work/out.log" 2>&1; }
get() { kubectl get "$@" -o "jsonpath={.metadata.name}" 2>/dev/null || true; }

# kubectl as during API discovery churn (right after CRDs change): its first $CHURN_FAILS asks
# for NFD's CRD fail as kubectl does when discovery comes back empty; every ask is counted.
cat > "$work/kubectl-churn" <<'EOS'
#!/usr/bin/env bash
if [ "${1:-}" = get ] && [ "${2:-}" = crd ] && [[ ${3:-} == nodefeaturerules.* ]]; then
  n=$(($(cat "$CHURN_COUNT") + 1))
  echo "$n" > "$CHURN_COUNT"
  if [ "$n" -le "$CHURN_FAILS" ]; then
    echo "error: the server doesn't have a resource type \"crd\"" >&2
    exit 1
  fi
fi
exec kubectl "$@"
EOS
chmod +x "$work/kubectl-churn"
export CHURN_COUNT=$work/churn-count
churn() {  # churn FAILS: the next deploy.sh runs see FAILS failed asks first
  echo 0 > "$CHURN_COUNT"
  export CHURN_FAILS=$1 KUBECTL=$work/kubectl-churn
}
asks() { cat "$CHURN_COUNT"; }

# Without NFD, deploy refuses at once (NotFound is an answer) and applies nothing.
churn 0
rc=0
OVERLAY=eks deploy deploy || rc=$?
expect "deploy without NFD fails" "$rc" 1
expect "...saying why" "$(grep -c 'install Node Feature Discovery' "$work/out.log")" 1
expect "...asking once" "$(asks)" 1
expect "...and applies nothing" "$(get crd deviceconfigs.k8s.aws)" ""

# When kubectl never gets an answer, deploy gives up after 5 asks, saying what failed.
churn 99
rc=0
OVERLAY=eks deploy deploy || rc=$?
expect "deploy without an answer fails" "$rc" 1
expect "...after 5 asks" "$(asks)" 5
expect "...saying why" "$(grep -c "cannot tell whether nfd.k8s-sigs.io NodeFeatureRule is served.*doesn't have a resource type" "$work/out.log")" 1
expect "...and applies nothing" "$(get crd deviceconfigs.k8s.aws)" ""

# A render that fails (here kustomize itself) stops deploy and undeploy before they touch the
# cluster: nothing half-written is applied or deleted.
cat > "$work/kubectl-broken-kustomize" <<'EOS'
#!/usr/bin/env bash
if [ "${1:-}" = kustomize ]; then echo "error: MalformedYAMLError (simulated)" >&2; exit 1; fi
exec kubectl "$@"
EOS
chmod +x "$work/kubectl-broken-kustomize"
rc=0
KUBECTL=$work/kubectl-broken-kustomize OVERLAY=emulated deploy deploy || rc=$?
expect "deploy with a failing render fails" "$rc" 1
expect "...and applies nothing" "$(get crd deviceconfigs.k8s.aws)" ""

# The emulated overlay has no NFD rule: it deploys where NFD is not installed, never asking.
churn 0
OVERLAY=emulated deploy deploy
expect "emulated: deploys without NFD, not asking for it" "$(asks)" 0
unset KUBECTL
expect "emulated: operator" "$(get deployment -n aws-neuron-operator neuron-operator)" neuron-operator
expect "emulated: the DeviceConfig emulates a trn1.32xlarge" \
  "$(kubectl get deviceconfig -n aws-neuron-operator neuron -o 'jsonpath={.spec.emulation.instanceType}')" \
  trn1.32xlarge
expect "emulated: ...selecting every node, with no driver image" \
  "$(kubectl get deviceconfig -n aws-neuron-operator neuron -o 'jsonpath={.spec.selector}{.spec.driversImage}')" ""
# Undeployed without OVERLAY=emulated: the base's NFD rule cannot exist without NFD, so it is
# left out instead of failing kubectl after everything else was deleted.
rc=0
deploy undeploy || rc=$?
expect "emulated: undeploy with the base's manifests succeeds without NFD" "$rc" 0
expect "...leaves no CRD" "$(get crd deviceconfigs.k8s.aws)" ""
expect "...nor the operator" "$(get deployment -n aws-neuron-operator neuron-operator)" ""

nfd_crd() {  # the CRD an NFD install brings, for group $1
  cat <<EOC | kubectl apply $validate -f - > /dev/null
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nodefeaturerules.$1}
spec:
  group: $1
  names: {kind: NodeFeatureRule, listKind: NodeFeatureRuleList, plural: nodefeaturerules, singular: nodefeaturerule}
  scope: Cluster
  versions:
    - {name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
EOC
}
nfd_crd nfd.k8s-sigs.io
nfd_crd nfd.openshift.io

# install: the CRD alone.
deploy install
expect "install: CRD" "$(get crd deviceconfigs.k8s.aws)" deviceconfigs.k8s.aws
expect "install: no operator" "$(get deployment -n aws-neuron-operator neuron-operator)" ""

# deploy with an image, on EKS, while discovery churns: the NFD check asks again.
churn 2
IMG=registry.example/neuron/neuron-operator:1.2.3 OVERLAY=eks deploy deploy
expect "eks: deploy through discovery churn, asking until answered" "$(asks)" 3
unset KUBECTL
expect "eks: operator image" \
  "$(kubectl get deployment -n aws-neuron-operator neuron-operator -o 'jsonpath={.spec.template.spec.containers[0].image}')" \
  registry.example/neuron/neuron-operator:1.2.3
expect "eks: preinstalled driver" \
  "$(kubectl get deviceconfig -n aws-neuron-operator neuron -o 'jsonpath={.spec.driverMode}')" preinstalled
expect "eks: NFD rule" "$(get nodefeaturerules.nfd.k8s-sigs.io neuron-nfd-rule)" neuron-nfd-rule
expect "eks: the DeviceConfig runs the device plugin image of IMG's registry and tag" \
  "$(kubectl get deviceconfig -n aws-neuron-operator neuron -o 'jsonpath={.spec.devicePluginImage}')" \
  registry.example/neuron/neuron-device-plugin:1.2.3
expect "eks: ...and the node agent's" \
  "$(kubectl get deviceconfig -n aws-neuron-operator neuron -o 'jsonpath={.spec.nodeAgentImage}')" \
  registry.example/neuron/neuron-node-agent:1.2.3
expect "no kustomize deprecation noise" "$(grep -c 'deprecated' "$work/out.log" || true)" 0

# undeploy: caches first, held while in use. The fake runs no operator, so a finalizer set
# here stands for "pods still use it": undeploy waits (bounded), says so and deletes nothing else.
expect "deploy: cache CRDs" "$(get crd neuroncaches.k8s.aws)" neuroncaches.k8s.aws
kubectl apply $validate -f "$src/deploy/caches/clusterneuroncache.yaml" > /dev/null
kubectl apply $validate -f - > /dev/null <<'EOY'
apiVersion: k8s.aws/v1alpha1
kind: NeuronCache
metadata: {name: held, namespace: aws-neuron-operator, finalizers: [k8s.aws/neuroncache-in-use]}
spec: {image: registry.example.com/ml/cache:v1}
EOY
rc=0
CACHE_WAIT=2s OVERLAY=eks deploy undeploy || rc=$?
expect "undeploy: a cache in use stops it" "$rc" 1
expect "...saying why" "$(grep -c 'caches still in use after 2s' "$work/out.log" || true)" 1
expect "...the unheld cache gone" "$(get clusterneuroncache shared-bert)" ""
expect "...the operator still there" "$(get deployment -n aws-neuron-operator neuron-operator)" \
  neuron-operator
expect "...the DeviceConfig too" "$(get deviceconfig -n aws-neuron-operator neuron)" neuron
# The pods went (the operator would drop its finalizer): undeploy goes through.
kubectl patch neuroncache -n aws-neuron-operator held --type=merge \
  -p '{"metadata":{"finalizers":null}}' > /dev/null
kubectl apply $validate -f "$src/deploy/caches/clusterneuroncache.yaml" > /dev/null
OVERLAY=eks deploy undeploy
first_deleted=$(grep -m1 'deleted' "$work/out.log" || true)
expect "undeploy deletes the caches first" "${first_deleted%% *}" \
  'clusterneuroncache.k8s.aws'
deleted_dc=$(grep -n 'deviceconfig.k8s.aws' "$work/out.log" | head -1 | cut -d: -f1)
deleted_cache=$(grep -n 'clusterneuroncache.k8s.aws' "$work/out.log" | head -1 | cut -d: -f1)
expect "...then the DeviceConfig" "$([ "${deleted_cache:-99}" -lt "${deleted_dc:-0}" ] && echo yes)" yes
expect "undeploy: cache CRDs gone" "$(get crd neuroncaches.k8s.aws)" ""
expect "undeploy: operator gone" "$(get deployment -n aws-neuron-operator neuron-operator)" ""
expect "undeploy: CRD gone" "$(get crd deviceconfigs.k8s.aws)" ""

# OpenShift, image by digest.
digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
IMG=registry.example/neuron-operator@$digest OVERLAY=openshift deploy deploy
expect "openshift: image by digest" \
  "$(kubectl get deployment -n aws-neuron-operator neuron-operator -o 'jsonpath={.spec.template.spec.containers[0].image}')" \
  "registry.example/neuron-operator@$digest"
expect "openshift: NFD rule in OpenShift's group" \
  "$(get nodefeaturerules.nfd.openshift.io neuron-nfd-rule)" neuron-nfd-rule
expect "openshift: SCC binding" "$(get rolebinding -n aws-neuron-operator neuron-scc-privileged)" \
  neuron-scc-privileged

# uninstall: DeviceConfigs and the CRD; a bad overlay is refused.
deploy uninstall
expect "uninstall: no DeviceConfig CRD" "$(get crd deviceconfigs.k8s.aws)" ""
rc=0
OVERLAY=gke deploy render || rc=$?
expect "unknown overlay refused" "$rc" 2

[ "$failures" -eq 0 ] && echo "deploy script: all checks passed"
exit "$failures"
