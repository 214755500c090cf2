#!/usr/bin/env python3
"""Pods per second the real kube-scheduler binds, with and without our extender (issue 19).

Runs against a real kube-apiserver reached through `kubectl proxy` (no kubelets needed): loads N
synthetic Neuron nodes (bench/gen_cluster, status included: a Node is created with its status),
creates M pending pods asking for aws.amazon.com/neuron or neuroncore (1/2/4/8), then starts the
scheduler command given and times the binds from a watch opened before it starts: pods/s from the
first bind to the last. The caller starts and stops kube-scheduler and the extender around it
(bench/real-scheduler-throughput.sh). Standard library only.

  real_scheduler_throughput.py load-nodes NODES.ndjson   # POSTs every Node, 16 at a time
  real_scheduler_throughput.py run --pods M --label L -- SCHEDULER-COMMAND...
  real_scheduler_throughput.py clean-pods                # deletes the pods
  real_scheduler_throughput.py clean                     # deletes the pods and synthetic nodes
"""
import argparse
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from k8s_proxy import API, call, post_all

NS = "sched-bench"
NODE_LABEL = "eks.amazonaws.com/nodegroup"  # every gen_cluster node carries it


def load_nodes(ndjson):
    nodes = []
    with open(ndjson) as f:
        for line in f:
            obj = json.loads(line)
            if obj.get("kind") != "Node":
                continue
            obj["metadata"].pop("uid", None)
            obj["metadata"].pop("managedFields", None)
            nodes.append(obj)
    t = time.monotonic()
    post_all([("/api/v1/nodes", n) for n in nodes], workers=16)
    print(f"loaded {len(nodes)} nodes in {time.monotonic() - t:.1f}s")


def pending_pod(i):
    resource = "aws.amazon.com/neuron" if i % 2 == 0 else "aws.amazon.com/neuroncore"
    count = str([1, 2, 4, 8][(i // 2) % 4])
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i:05d}", "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"limits": {resource: count},
                                                   "requests": {resource: count}}}],
                     # kube-apiserver's TaintNodesByCondition admission gives a new Node
                     # not-ready:NoSchedule, which only the (stopped) node controller lifts.
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
                                     {"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],
                     "terminationGracePeriodSeconds": 0}}


def watch_binds(total, resource_version, bound_at, done):
    path = (f"/api/v1/namespaces/{NS}/pods?watch=1&resourceVersion={resource_version}"
            "&allowWatchBookmarks=false")
    with urllib.request.urlopen(API + path, timeout=3600) as stream:
        for line in stream:
            ev = json.loads(line)
            pod = ev.get("object", {})
            name = pod.get("metadata", {}).get("name")
            if pod.get("spec", {}).get("nodeName") and name not in bound_at:
                bound_at[name] = time.monotonic()
                if len(bound_at) >= total:
                    break
    done.set()


def run(pods, label, command, timeout):
    call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    # The controller-manager, which would create it, is stopped for the run; pods are refused
    # without their namespace's default ServiceAccount.
    call("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "default"}})
    post_all([(f"/api/v1/namespaces/{NS}/pods", pending_pod(i)) for i in range(pods)], workers=16)
    _, body = call("GET", f"/api/v1/namespaces/{NS}/pods?limit=1")
    rv = json.loads(body)["metadata"]["resourceVersion"]
    bound_at, done = {}, threading.Event()
    threading.Thread(target=watch_binds, args=(pods, rv, bound_at, done), daemon=True).start()
    time.sleep(0.5)
    sched = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(f"/tmp/{label}-scheduler.log", "w"))
    done.wait(timeout)
    sched.send_signal(signal.SIGTERM)
    sched.wait(30)
    times = sorted(bound_at.values())
    if len(times) < 2:
        print(f"{label}: only {len(times)} of {pods} pods bound")
        return 1
    span = times[-1] - times[0]
    print(json.dumps({"label": label, "pods": pods, "bound": len(times),
                      "seconds_first_to_last_bind": round(span, 2),
                      "pods_per_second": round((len(times) - 1) / span, 1)}))
    return 0 if len(times) == pods else 1


def clean(nodes_too):
    call("DELETE", f"/api/v1/namespaces/{NS}/pods?gracePeriodSeconds=0")
    if nodes_too:
        call("DELETE", f"/api/v1/nodes?labelSelector={NODE_LABEL}%3Dneuron")
    for _ in range(120):
        _, pods = call("GET", f"/api/v1/namespaces/{NS}/pods?limit=1")
        _, nodes = call("GET", f"/api/v1/nodes?labelSelector={NODE_LABEL}%3Dneuron&limit=1")
        if not json.loads(pods).get("items") and not (nodes_too and json.loads(nodes).get("items")):
            return 0
        time.sleep(1)
    return 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    ln = sub.add_parser("load-nodes")
    ln.add_argument("ndjson")
    r = sub.add_parser("run")
    r.add_argument("--pods", type=int, default=2000)
    r.add_argument("--label", required=True)
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("command", nargs="+")
    sub.add_parser("clean-pods")
    sub.add_parser("clean")
    a = p.parse_args()
    if a.cmd == "load-nodes":
        load_nodes(a.ndjson)
        return 0
    if a.cmd == "run":
        return run(a.pods, a.label, a.command, a.timeout)
    return clean(nodes_too=a.cmd == "clean")


if __name__ == "__main__":
    sys.exit(main())
