#!/usr/bin/env bash
# One OCI image per binary, without a container daemon: build/images/<binary>/ is an OCI image
# layout whose index names the image by TAG alone (push it with
# `skopeo copy oci:build/images/neuron-operator:TAG docker://REGISTRY/neuron-operator:TAG`).
# With docker available, `make docker-build` builds the same images from images/Dockerfile.
#   scripts/build-images.sh [TAG]     (default: dev; binaries from build/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
TAG=${1:-dev}
BIN_DIR=${NEURON_BIN_DIR:-build/bin}
OUT=${IMAGES_DIR:-build/images}
for bin in neuron-operator neuron-scheduler-extender neuron-node-agent neuron-device-plugin; do
  # The node agent and the device plugin need root on the node (see scripts/image-rootfs.sh).
  case $bin in
    neuron-node-agent | neuron-device-plugin) user=0:0 ;;
    *) user=65532:65532 ;;
  esac
  bash scripts/image-rootfs.sh "$BIN_DIR/$bin" "$OUT/rootfs/$bin" >/dev/null
  python3 scripts/oci-image.py "$OUT/rootfs/$bin" "$OUT/$bin" --tag "$TAG" --user "$user" \
    --label "org.opencontainers.image.title=$bin" \
    --label "org.opencontainers.image.source=https://github.com/awslabs/neuron-k8s"
done
