#!/usr/bin/env python3
"""Every PromQL expression of deploy/monitoring, evaluated by promtool against a real Prometheus
that scrapes our real node agent.

  tests/monitoring/evaluate_with_prometheus.py SOURCE_DIR BIN_DIR

Starts the fake kubelet's PodResources server (neuron_fake_podresources) with a device-plugin pod
(two logical cores) and a DRA pod (one whole device), neuron-node-agent emulating a trn2.48xlarge
and asking that server, and Prometheus scraping the agent every second with the PrometheusRule's
rules (every range window shortened to 10s, so the test need not run for minutes). While it runs the
emulated driver's busy counters of the held cores advance by 0.5 s per second, and device 3 gets an
uncorrectable ECC error. Then:
  - every recording rule and every dashboard target naming only node agent series must give a
    non-empty result, and every other dashboard target (extender, device plugin, operator:
    nothing here serves them) must at least evaluate without error;
  - each pod's recorded cores held, busy ratio (about 0.5), memory and errors are checked;
  - the device-plugin pod is removed from the kubelet's answer: its neuron_core_allocation series
    must be gone from Prometheus within a few seconds while the DRA pod's stay.
Exits 0 when all hold, 1 otherwise, 77 (skipped) when prometheus or promtool is not installed.
"""
import contextlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_monitoring import split_rule_object  # noqa: E402

WINDOW = "10s"
AGENT_PREFIXES = ("neuron_node_", "neuron_device_", "neuron_core_", "neuron_agent_")
failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=2.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(pred, seconds, step=0.2):
    end = time.time() + seconds
    while time.time() < end:
        try:
            if pred():
                return True
        except OSError:
            pass
        time.sleep(step)
    return False


def pods_json(with_dp):
    pods = []
    if with_dp:  # device plugin: logical cores 0 and 1 = device 0's physical cores 0-3 at LNC 2
        pods.append({"name": "dp-pod", "namespace": "ml", "containers": [
            {"name": "main", "devices": [
                {"resourceName": "aws.amazon.com/neuroncore", "deviceIds": ["0", "1"]}]}]})
    pods.append({"name": "dra-pod", "namespace": "serve", "containers": [
        {"name": "server", "dynamicResources": [
            {"className": "neuron.aws.com", "claimName": "one-device", "claimNamespace": "serve",
             "claimResources": [{"driverName": "neuron.aws.com", "poolName": "node-1",
                                 "deviceName": "neurondevice15"}]}]}]})
    return json.dumps({"podResources": pods})


def write_atomic(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(path + ".tmp", path)


class Counters(threading.Thread):
    """Advances the held cores' nc_time_in_use (microseconds) by 0.5 s per second, and one
    core's failure count by one per second."""

    def __init__(self, emu):
        super().__init__(daemon=True)
        base = os.path.join(emu, "sys", "devices", "virtual", "neuron_device")
        core = lambda d, c: os.path.join(base, f"neuron{d}", f"neuron_core{c}", "stats")
        self.busy = [os.path.join(core(0, c), "other_info", "nc_time_in_use", "total") for c in range(4)]
        self.busy += [os.path.join(core(15, c), "other_info", "nc_time_in_use", "total") for c in range(8)]
        self.failure = os.path.join(core(0, 0), "status", "failure", "total")
        self.stop = threading.Event()

    @staticmethod
    def read(path):
        with open(path, encoding="utf-8") as fh:
            return int(fh.read().strip() or 0)

    def run(self):
        # Values follow the wall clock (not a count of ticks), so the rate is exact however late
        # a tick runs on a loaded machine.
        start = {f: self.read(f) for f in self.busy + [self.failure]}
        t0 = time.time()
        while not self.stop.wait(0.25):
            elapsed = time.time() - t0
            for f in self.busy:
                write_atomic(f, f"{start[f] + int(elapsed * 500000)}\n")
            write_atomic(self.failure, f"{start[self.failure] + int(elapsed)}\n")


def promtool_query(promtool, prom, expr):
    """(ok, result lines) of an instant query; ok False on a promtool error."""
    p = subprocess.run([promtool, "query", "instant", f"http://{prom}", expr],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    lines = [l for l in p.stdout.splitlines() if "=>" in l]
    return p.returncode == 0, lines, p.stdout


def promtool_query_data(promtool, prom, expr, seconds=8.0):
    """As promtool_query, asked again (up to `seconds`) until it returns data. A scrape that
    misses its 1 s timeout on a loaded machine leaves every series stale until the next one."""
    end = time.time() + seconds
    while True:
        ok, lines, out = promtool_query(promtool, prom, expr)
        if (ok and lines) or time.time() >= end:
            return ok, lines, out
        time.sleep(0.5)


def sample_values(lines, label):
    """label value -> sample value, from promtool's `{...} => V @[T]` lines."""
    out = {}
    for l in lines:
        m = re.search(label + r'="([^"]*)".*=> ([-+0-9.eE]+|NaN) @', l)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def dashboard_targets(path):
    with open(path, encoding="utf-8") as fh:
        dash = json.load(fh)
    stack, out = list(dash.get("panels", [])), []
    while stack:
        p = stack.pop(0)
        stack.extend(p.get("panels", []))
        for t in p.get("targets", []):
            out.append((f"{p.get('title')} / {t.get('refId')}", t.get("expr", "")))
    return out


RANGE = re.compile(r"\[\d+(?:ms|s|m|h|d|w|y)\]")


def short_windows(expr):
    """Every range selector [Nm] made [WINDOW], so a few seconds of scrapes fill it."""
    return RANGE.sub(f"[{WINDOW}]", expr)


def grafana_to_promql(expr):
    for var, value in (("__rate_interval", WINDOW), ("__interval", "1s"), ("__range", WINDOW),
                       ("node", "node-1"), ("namespace", ".*"), ("pod", ".*")):
        expr = expr.replace("${" + var + "}", value).replace("$" + var, value)
    # Any other template variable: Grafana's "All".
    return short_windows(re.sub(r"\$\{?\w+\}?", ".*", expr))


def without_comparison(expr):
    """An alert's expression less its final threshold (`... > 0`), or None when it has none."""
    m = re.match(r"(?s)^(.*?)\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?[-+0-9.eE]+\s*$", expr.strip())
    return m.group(1) if m else None


def only_agent_series(expr):
    names = re.findall(r"(?<![A-Za-z0-9_:])neuron_[a-z_]+", expr)
    names += re.findall(r"(?<![A-Za-z0-9_])(?:pod|neuron):neuron_[a-z_]+", expr)
    return all(n.split(":")[-1].startswith(AGENT_PREFIXES) for n in names)


def evaluate_alerts(promtool, prom, alerts):
    """Each alert's expression must evaluate; less its threshold, one over the agent's series
    (or our recording rules of them) must have data."""
    for name, expr in alerts:
        ok, _, out = promtool_query(promtool, prom, expr)
        expect(ok, f"alert {name}: evaluates" + ("" if ok else f": {expr}\n{out}"))
        base = without_comparison(expr)
        if base is None or not only_agent_series(base):
            continue
        ok, lines, out = promtool_query_data(promtool, prom, base)
        expect(ok and len(lines) > 0, f"alert {name} without its threshold: non-empty"
               + ("" if ok and lines else f": {base}\n{out}"))


def evaluate_all(promtool, prom, src, records):
    for name in records:
        ok, lines, out = promtool_query_data(promtool, prom, name)
        expect(ok and len(lines) > 0, f"recording rule {name}: non-empty" + ("" if ok else ":\n" + out))
    for what, expr in dashboard_targets(os.path.join(src, "deploy", "monitoring", "grafana-dashboard.json")):
        promql = grafana_to_promql(expr)
        if only_agent_series(expr):
            ok, lines, out = promtool_query_data(promtool, prom, promql)
            expect(ok and len(lines) > 0, f"panel {what}: non-empty from the agent's series"
                   + ("" if ok and lines else f": {promql}\n{out}"))
        else:
            ok, lines, out = promtool_query(promtool, prom, promql)
            expect(ok, f"panel {what}: evaluates (no series here to fill it)" + ("" if ok else ":\n" + out))


def check_values(promtool, prom):
    def values(expr):
        return sample_values(promtool_query_data(promtool, prom, expr)[1], "pod")
    held = values("pod:neuron_cores_held:count")
    expect(held == {"dp-pod": 2.0, "dra-pod": 4.0}, f"cores held per pod (logical): {held}")
    busy = values("pod:neuron_core_busy:ratio")
    expect(set(busy) == {"dp-pod", "dra-pod"} and all(0.4 <= v <= 0.6 for v in busy.values()),
           f"busy ratio per pod 0.5 +- 0.1: {busy}")
    mem = values("pod:neuron_device_memory_used_bytes:sum")
    expect(set(mem) == {"dp-pod", "dra-pod"} and mem["dra-pod"] == 2 * mem["dp-pod"] > 0,
           f"device memory per pod (8 cores vs 4 of the same emulated use): {mem}")
    errors = values("pod:neuron_core_execution_errors:rate")
    expect(errors.get("dp-pod", 0) > 0 and errors.get("dra-pod") == 0,
           f"failed executions per second, only on dp-pod's core: {errors}")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    src, bins = sys.argv[1], sys.argv[2]
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prometheus or not promtool:
        print("SKIP prometheus or promtool is not installed")
        return 77
    with open(os.path.join(src, "deploy", "monitoring", "prometheus-rule.yaml"), encoding="utf-8") as fh:
        with contextlib.redirect_stdout(io.StringIO()):
            _, rules = split_rule_object(fh.read())
    records = re.findall(r"^\s*- record:\s*(\S+)\s*$", rules, re.M)
    rules = short_windows(rules)
    alerts = [(r["alert"], r["expr"]) for g in yaml.safe_load(rules)["groups"]
              for r in g["rules"] if "alert" in r]
    procs = []
    with tempfile.TemporaryDirectory(prefix="neuron-prom-eval-") as tmp:
        try:
            return run(tmp, src, bins, prometheus, promtool, rules, (records, alerts), procs)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


def start(procs, tmp, name, argv, **kw):
    log = open(os.path.join(tmp, name + ".log"), "w", encoding="utf-8")
    p = subprocess.Popen(argv, stderr=log, stdout=kw.pop("stdout", log), **kw)
    procs.append(p)
    return p


def run(tmp, src, bins, prometheus, promtool, rules, exprs, procs):
    records, alerts = exprs
    pods = os.path.join(tmp, "pods.json")
    write_atomic(pods, pods_json(with_dp=True))
    sock = os.path.join(tmp, "pr.sock")
    fake = start(procs, tmp, "fake", [os.path.join(bins, "neuron_fake_podresources"),
                                      "--socket=" + sock, "--pods=" + pods],
                 stdout=subprocess.PIPE, text=True)
    if not expect(fake.stdout.readline().strip() == sock, f"fake PodResources serves on {sock}"):
        return 1
    agent_addr = f"127.0.0.1:{free_port()}"
    emu = os.path.join(tmp, "emulated")
    start(procs, tmp, "agent", [os.path.join(bins, "neuron-node-agent"), "--emulate=trn2.48xlarge",
                                "--emulate-dir=" + emu, "--node-name=node-1", "--listen=" + agent_addr,
                                "--interval=1s", "--pod-resources-socket=" + sock])
    if not expect(wait_for(lambda: get(f"http://{agent_addr}/readyz") is not None, 60),
                  "the agent is ready"):
        return 1
    counters = Counters(emu)
    counters.start()
    # An uncorrectable ECC error on device 3, so the "Unhealthy devices" panel has a row.
    write_atomic(os.path.join(emu, "sys", "devices", "virtual", "neuron_device", "neuron3", "stats",
                              "hardware", "mem_ecc_uncorrected"), "1\n")
    rules_file = os.path.join(tmp, "rules.yaml")
    write_atomic(rules_file, rules)
    prom = f"127.0.0.1:{free_port()}"
    config = os.path.join(tmp, "prometheus.yaml")
    write_atomic(config, "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                 f"rule_files: [{rules_file}]\n"
                 "scrape_configs:\n  - job_name: neuron-node-metrics\n"
                 f"    static_configs: [{{targets: ['{agent_addr}'], labels: {{node: node-1}}}}]\n")
    start(procs, tmp, "prometheus", [prometheus, "--config.file=" + config,
                                     "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                                     "--web.listen-address=" + prom])
    if not expect(wait_for(lambda: "ready" in get(f"http://{prom}/-/ready").lower(), 60),
                  "Prometheus is ready"):
        return 1
    time.sleep(14)  # the 10s windows filled with scrapes of moving counters
    evaluate_all(promtool, prom, src, records)
    evaluate_alerts(promtool, prom, alerts)
    check_values(promtool, prom)
    counters.stop.set()

    write_atomic(pods, pods_json(with_dp=False))  # dp-pod ended
    t0 = time.time()
    gone = wait_for(lambda: not promtool_query(promtool, prom, 'neuron_core_allocation{pod="dp-pod"}')[1], 10)
    took = time.time() - t0
    # An agent scan (1s) + a scrape (1s) + promtool's own time; Prometheus marks the series stale.
    expect(gone and took <= 4.0, f"dp-pod's neuron_core_allocation gone from Prometheus within 4 s "
           f"of its end ({took:.1f} s)")
    dra = promtool_query(promtool, prom, 'neuron_core_allocation{pod="dra-pod"}')[1]
    expect(len(dra) == 8, f"dra-pod's 8 physical cores still attributed ({len(dra)})")
    if failures:
        print(f"\n{len(failures)} check(s) failed (logs of the agent, fake and Prometheus were in {tmp})")
        for name in ("agent", "fake", "prometheus"):
            with open(os.path.join(tmp, name + ".log"), encoding="utf-8", errors="replace") as fh:
                print(f"--- {name}.log (tail)\n" + "".join(fh.readlines()[-15:]))
        return 1
    print(f"\nall checks passed ({len(records)} recording rules, dashboard targets evaluated)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
