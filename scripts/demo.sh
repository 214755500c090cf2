#!/usr/bin/env bash
# `make demo`: the whole stack on this machine (tests/demo/stack_demo.cc): the fake
# kube-apiserver, the operator reconciling the sample DeviceConfig, a node agent and a device
# plugin per emulated node (trn1.32xlarge, trn2.48xlarge) against fake kubelets, and the
# scheduler extender placing pods exactly as kube-scheduler calls it. Prints a summary and stops
# everything with SIGTERM. Extra arguments go to the demo (--check: exit 1 on any failed
# expectation).
set -euo pipefail
cd "$(dirname "$0")/.."
export NEURON_SOURCE_DIR="$PWD"
export NEURON_BIN_DIR="${NEURON_BIN_DIR:-$PWD/build/bin}"
exec "$NEURON_BIN_DIR/neuron-stack-demo" "$@"
