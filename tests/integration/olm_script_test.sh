#!/usr/bin/env bash
# make bundle / bundle-build / index (scripts/olm.sh) end to end without a container daemon: the
# bundle directory, the bundle image as an OCI layout (labels = annotations, layer = manifests/
# and metadata/), the catalog and install.yaml. The bundle's content rules are
# operator_olm_bundle_test's.
#   tests/integration/olm_script_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1
export NEURON_BIN_DIR=$2
export CONTAINER_TOOL=no-such-container-tool VERSION=1.2.3 IMG=registry.example/neuron-operator:1.2.3
export BUNDLE_IMG=registry.example/neuron-operator-bundle:v1.2.3
export INDEX_IMG=registry.example/neuron-operator-index:v1.2.3
cd "$src"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

bash scripts/olm.sh bundle > "$log" 2>&1 || { cat "$log"; echo "FAIL bundle"; exit 1; }
bash scripts/olm.sh bundle-build >> "$log" 2>&1 || { cat "$log"; echo "FAIL bundle-build"; exit 1; }
bash scripts/olm.sh index >> "$log" 2>&1 || { cat "$log"; echo "FAIL index"; exit 1; }
grep -q "no-such-container-tool unavailable" "$log" || { cat "$log"; echo "FAIL no fallback notice"; exit 1; }

python3 - <<'PY'
import gzip, io, json, os, sys, tarfile
failures = []
def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

csv = "build/bundle/manifests/neuron-operator.clusterserviceversion.yaml"
expect(os.path.isfile(csv), "bundle: CSV written")
text = open(csv).read()
expect("name: neuron-operator.v1.2.3" in text, "bundle: CSV named for VERSION")
expect("image: registry.example/neuron-operator:1.2.3" in text, "bundle: CSV runs IMG")
expect(os.path.isfile("build/bundle/manifests/neuron-alerts_monitoring.coreos.com_prometheusrule.yaml"),
       "bundle: carries the PrometheusRule")

layout = "build/images/bundle"
index = json.load(open(os.path.join(layout, "index.json")))
desc = index["manifests"][0]
expect(desc["annotations"]["org.opencontainers.image.ref.name"] == "v1.2.3",
       "bundle image: tagged by BUNDLE_IMG's tag alone (skopeo copy oci:DIR:v1.2.3)")
def blob(digest):
    return open(os.path.join(layout, "blobs", *digest.split(":")), "rb").read()
manifest = json.loads(blob(desc["digest"]))
config = json.loads(blob(manifest["config"]["digest"]))
labels = config["config"]["Labels"]
annotations = open("build/bundle/metadata/annotations.yaml").read()
for key in ("mediatype.v1", "manifests.v1", "metadata.v1", "package.v1", "channels.v1",
            "channel.default.v1"):
    k = "operators.operatorframework.io.bundle." + key
    expect(k in labels and f"{k}: {labels[k]}" in annotations, "bundle image: label " + k)
expect("Entrypoint" not in config["config"], "bundle image: data only, no entrypoint")
layer = tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(manifest["layers"][0]["digest"]))))
names = set(layer.getnames())
expect("metadata/annotations.yaml" in names, "bundle image: metadata/annotations.yaml")
expect("manifests/neuron-operator.clusterserviceversion.yaml" in names, "bundle image: the CSV")
expect("bundle.Dockerfile" not in names, "bundle image: no Dockerfile inside")

catalog = open("build/catalog/neuron-operator/catalog.yaml").read()
expect("image: registry.example/neuron-operator-bundle:v1.2.3" in catalog, "catalog: the bundle image")
install = open("build/catalog/install.yaml").read()
expect("image: registry.example/neuron-operator-index:v1.2.3" in install, "install.yaml: the index image")
sys.exit(1 if failures else 0)
PY
echo "olm scripts: all checks passed"
