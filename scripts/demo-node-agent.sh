#!/usr/bin/env bash
# `make demo-node`: runs the real node agent over an emulated Neuron host, prints what it
# sees (inventory + a metrics sample), injects an uncorrectable ECC error into the emulated
# sysfs and shows the device turn unhealthy, then shuts the agent down with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
SHAPE="${1:-trn1.32xlarge}"
BIN="${NEURON_BIN_DIR:-build/bin}/neuron-node-agent"
WORK=$(mktemp -d /tmp/neuron-demo-XXXXXX)
trap 'kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT

"$BIN" --emulate="$SHAPE" --emulate-dir="$WORK/host" --listen=127.0.0.1:0 --node-name=demo-node \
  --features-dir="$WORK/features.d" --interval=200ms --healthy-after=2s >"$WORK/agent.log" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q "node agent ready" "$WORK/agent.log" && break; sleep 0.1; done
if ! grep -q "node agent ready" "$WORK/agent.log"; then cat "$WORK/agent.log"; exit 1; fi
PORT=$(grep -o 'listening address=127.0.0.1:[0-9]*' "$WORK/agent.log" | head -1 | cut -d: -f2)
URL="http://127.0.0.1:$PORT"

echo "== neuron-node-agent emulating $SHAPE on $URL"
echo
echo "== /inventory"
curl -sf "$URL/inventory" | python3 -c '
import json, sys
inv = json.load(sys.stdin)
print("node=%s instance_type=%s devices=%d cores=%d physical_cores=%d lnc=%d (%s)" % (
    inv["node"], inv["instance_type"], len(inv["devices"]), inv["total_cores"],
    inv["total_physical_cores"], inv["lnc"]["value"], inv["lnc"]["origin"]))
for d in inv["devices"]:
    print("  neuron%-2d %s %s %-11s cores=%d numa=%d links=%s healthy=%s" % (
        d["index"], d["pci_address"], d["device_id"], d["family"], d["cores"], d["numa_node"],
        d["connected_devices"], d["healthy"]))'
echo
echo "== NFD labels ($WORK/features.d/aws-neuron)"
grep -v '^#' "$WORK/features.d/aws-neuron"
echo
echo "== /metrics (sample)"
curl -sf "$URL/metrics" | grep -E '^neuron_(node_|device_info|device_healthy\{device="[01]"|core_execution_status_total\{device="0",core="0")' | head -20
echo "   ... $(curl -sf "$URL/metrics" | grep -vc '^#') samples in all"
echo
echo "== injecting an uncorrectable ECC error on neuron1"
# Where driver 2.30.2 (the emulated default) publishes it.
echo 1 > "$WORK/host/sys/devices/virtual/neuron_device/neuron1/stats/hardware/mem_ecc_uncorrected"
sleep 0.6
curl -sf "$URL/metrics" | grep -E '^neuron_device_healthy\{device="1"\}'
echo "== waiting out the 2s quiet period"
sleep 2.5
curl -sf "$URL/metrics" | grep -E '^neuron_device_healthy\{device="1"\}'
echo
echo "== agent log"
kill -TERM "$PID"; wait "$PID" || true
cat "$WORK/agent.log"
