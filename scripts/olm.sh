#!/usr/bin/env bash
# OLM packaging (make bundle, bundle-build, index), from the same manifests `make deploy` applies.
#   scripts/olm.sh bundle        build/bundle/: manifests/ (CSV, CRD, PrometheusRule),
#                                metadata/annotations.yaml, bundle.Dockerfile
#   scripts/olm.sh bundle-build  the bundle image BUNDLE_IMG: with $CONTAINER_TOOL when it is
#                                installed, else an OCI layout in build/images/bundle
#   scripts/olm.sh index         build/catalog/: a file-based catalog pointing at BUNDLE_IMG,
#                                its Dockerfile and install.yaml (CatalogSource, OperatorGroup,
#                                Subscription for INDEX_IMG); builds INDEX_IMG with
#                                $CONTAINER_TOOL when it is installed
# Environment: VERSION (semver, default 0.1.0), IMG (operator image), BUNDLE_IMG, INDEX_IMG,
# CHANNEL (default stable), REPLACES (the CSV this one upgrades), CONTAINER_TOOL (docker).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-0.1.0}
CHANNEL=${CHANNEL:-stable}
BUNDLE_IMG=${BUNDLE_IMG:-neuron-operator-bundle:v$VERSION}
INDEX_IMG=${INDEX_IMG:-neuron-operator-index:v$VERSION}
CONTAINER_TOOL=${CONTAINER_TOOL:-docker}
OPERATOR=${NEURON_BIN_DIR:-build/bin}/neuron-operator

common=(--version="$VERSION" --channel="$CHANNEL" --replaces="${REPLACES:-}")

# The base's manifests with the operator image, plus the alerts (a bundle may carry a
# PrometheusRule; OLM installs it where the Prometheus Operator runs).
manifests() {
  mkdir -p build/olm
  { bash scripts/deploy.sh render; echo "---"; cat deploy/monitoring/prometheus-rule.yaml; } \
    > build/olm/manifests.yaml
  echo build/olm/manifests.yaml
}

# Installed and able to build (a docker client without its daemon is not).
have_tool() { "$CONTAINER_TOOL" info >/dev/null 2>&1; }

case ${1:-} in
  bundle)
    rm -rf build/bundle
    "$OPERATOR" bundle -f "$(manifests)" --out=build/bundle "${common[@]}" ${IMG:+--image="$IMG"}
    ;;
  bundle-build)
    [ -f build/bundle/bundle.Dockerfile ] || { echo "olm: run make bundle first" >&2; exit 1; }
    if have_tool; then
      "$CONTAINER_TOOL" build -f build/bundle/bundle.Dockerfile -t "$BUNDLE_IMG" build/bundle
    else
      # No container tool: the same image as an OCI layout (labels from the annotations).
      rm -rf build/olm/bundle-rootfs && mkdir -p build/olm/bundle-rootfs
      cp -r build/bundle/manifests build/bundle/metadata build/olm/bundle-rootfs/
      labels=()
      while read -r label; do labels+=(--label "$label"); done \
        < <(sed -n 's/^LABEL //p' build/bundle/bundle.Dockerfile)
      # The layout's index names the image by BUNDLE_IMG's tag alone (scripts/oci-image.py).
      ref=${BUNDLE_IMG%@*} tag=latest
      if [[ ${ref##*/} == *:* ]]; then tag=${ref##*:}; fi
      python3 scripts/oci-image.py build/olm/bundle-rootfs build/images/bundle \
        --tag "$tag" --entrypoint "" --user 65532:65532 "${labels[@]}"
      echo "olm: $CONTAINER_TOOL unavailable; bundle image $BUNDLE_IMG is the OCI layout" \
        "build/images/bundle (skopeo copy oci:build/images/bundle:$tag docker://$BUNDLE_IMG)"
    fi
    ;;
  index)
    rm -rf build/catalog
    "$OPERATOR" catalog -f "$(manifests)" --out=build/catalog "${common[@]}" \
      --bundle-image="$BUNDLE_IMG" --index-image="$INDEX_IMG"
    if have_tool; then
      "$CONTAINER_TOOL" build -f build/catalog/catalog.Dockerfile -t "$INDEX_IMG" build/catalog
    else
      echo "olm: $CONTAINER_TOOL unavailable; build the index image later with" \
        "'docker build -f build/catalog/catalog.Dockerfile -t $INDEX_IMG build/catalog'" \
        "(its base image is opm's)"
    fi
    echo "olm: after pushing $BUNDLE_IMG and $INDEX_IMG: kubectl apply -f build/catalog/install.yaml"
    ;;
  *)
    echo "usage: scripts/olm.sh bundle|bundle-build|index" >&2
    exit 2
    ;;
esac
