#!/usr/bin/env python3
"""Pods per second the real kube-scheduler places through DRA, beside extended resources (issue 31).

Runs against a real kube-apiserver reached through `kubectl proxy` (no kubelets: the nodes are
registered with their status, bench/gen_dra_cluster). For each run it creates every ResourceClaim
and Pod first (the backlog), then starts the scheduler command given and times the binds from a
watch opened before it starts: pods/s from the first bind to the last. Claim specs are AWS's
templates as shipped in deploy/dra/examples, read at run time. While the scheduler works, its CPU
profile can be fetched from its /debug/pprof (for `go tool pprof`).

  real_scheduler_dra.py load FILE.ndjson          # POSTs every Node / ResourceSlice, 32 at a time
  real_scheduler_dra.py delete-slices             # our driver's ResourceSlices
  real_scheduler_dra.py run --shape S --pods P --label L [--profile F] -- SCHEDULER-COMMAND...
  real_scheduler_dra.py clean-pods                # pods and claims (claims' finalizers removed)
  real_scheduler_dra.py clean                     # the above, slices and the bench's nodes

Shapes: ext (aws.amazon.com/neuron: 4 as an extended resource), dra1 (one device of class
neuron.aws.com), dra4 (AWS's 1x4-connected-devices), dra16 (AWS's all-devices).
"""
import argparse
import concurrent.futures
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from k8s_proxy import API, call, post_all

import yaml  # python3-yaml: AWS's templates are YAML

NS = "dra-bench"
NODE_SELECTOR = "neuron.aws.com%2Fbench%3Ddra"
RESOURCE = "/apis/resource.k8s.io/v1"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "dra", "examples")
TEMPLATES = {"dra4": "1x4-connected-devices.yaml", "dra16": "all-devices.yaml"}
# What kube-apiserver's TaintNodesByCondition gives a new Node; only the (stopped) node
# controller would lift it.
TOLERATIONS = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
               {"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]


def load(ndjson):
    paths = {"Node": "/api/v1/nodes", "ResourceSlice": RESOURCE + "/resourceslices",
             "DeviceClass": RESOURCE + "/deviceclasses"}
    items = []
    with open(ndjson) as f:
        for line in f:
            obj = json.loads(line)
            items.append((paths[obj["kind"]], obj))
    t = time.monotonic()
    post_all(items)
    print(f"loaded {len(items)} objects in {time.monotonic() - t:.1f}s")


def claim_spec(shape):
    if shape == "dra1":
        return {"devices": {"requests": [{"name": "neurons", "exactly": {
            "deviceClassName": "neuron.aws.com", "allocationMode": "ExactCount", "count": 1}}]}}
    with open(os.path.join(EXAMPLES, TEMPLATES[shape])) as f:
        return yaml.safe_load(f)["spec"]["spec"]


def pod(i, shape):
    container = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    spec = {"containers": [container], "tolerations": TOLERATIONS,
            "terminationGracePeriodSeconds": 0}
    if shape == "ext":
        container["resources"] = {"limits": {"aws.amazon.com/neuron": "4"},
                                  "requests": {"aws.amazon.com/neuron": "4"}}
    else:
        container["resources"] = {"claims": [{"name": "neurons"}]}
        spec["resourceClaims"] = [{"name": "neurons", "resourceClaimName": f"c-{i:05d}"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i:05d}", "namespace": NS},
            "spec": spec}


def watch_binds(total, resource_version, bound_at, done):
    """Records when each pod is first seen bound. A watch that ends (or expires) is resumed from
    its last resourceVersion, or from a fresh list whose bound pods are stamped now."""
    rv = resource_version
    while len(bound_at) < total:
        path = (f"/api/v1/namespaces/{NS}/pods?watch=1&resourceVersion={rv}"
                "&allowWatchBookmarks=true")
        try:
            with urllib.request.urlopen(API + path, timeout=3600) as stream:
                for line in stream:
                    ev = json.loads(line)
                    obj = ev.get("object", {})
                    if ev.get("type") == "ERROR":
                        rv = None
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    name = obj.get("metadata", {}).get("name")
                    if obj.get("spec", {}).get("nodeName") and name not in bound_at:
                        bound_at[name] = time.monotonic()
                        if len(bound_at) >= total:
                            break
        except (urllib.error.URLError, OSError) as e:
            print(f"watch: {e}; resuming", file=sys.stderr)
        if rv is None and len(bound_at) < total:
            _, body = call("GET", f"/api/v1/namespaces/{NS}/pods")
            listed = json.loads(body)
            rv = listed["metadata"]["resourceVersion"]
            for p in listed.get("items", []):
                if p["spec"].get("nodeName") and p["metadata"]["name"] not in bound_at:
                    bound_at[p["metadata"]["name"]] = time.monotonic()
    done.set()


def fetch_profile(out, seconds, started):
    """The scheduler's CPU profile over `seconds`, once it has bound its first pod."""
    started.wait(600)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    url = f"https://127.0.0.1:10260/debug/pprof/profile?seconds={seconds}"
    try:
        with urllib.request.urlopen(url, timeout=seconds + 60, context=ctx) as r, open(out, "wb") as f:
            f.write(r.read())
    except (urllib.error.URLError, OSError) as e:
        print(f"profile: {e}", file=sys.stderr)


def create_backlog(shape, pods):
    call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    # The controller-manager, which would create it, is stopped for the run.
    call("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "default"}})
    if shape != "ext":
        spec = claim_spec(shape)
        post_all([(f"{RESOURCE}/namespaces/{NS}/resourceclaims",
                   {"metadata": {"name": f"c-{i:05d}"}, "spec": spec}) for i in range(pods)])
    post_all([(f"/api/v1/namespaces/{NS}/pods", pod(i, shape)) for i in range(pods)])


def run(a):
    create_backlog(a.shape, a.pods)
    _, body = call("GET", f"/api/v1/namespaces/{NS}/pods?limit=1")
    rv = json.loads(body)["metadata"]["resourceVersion"]
    bound_at, done, first = {}, threading.Event(), threading.Event()
    threading.Thread(target=watch_binds, args=(a.pods, rv, bound_at, done), daemon=True).start()
    profiler = None
    if a.profile:
        profiler = threading.Thread(target=fetch_profile, args=(a.profile, a.profile_seconds, first))
        profiler.start()
    time.sleep(0.5)
    with open(f"/tmp/{a.label}-scheduler.log", "w") as log:
        sched = subprocess.Popen(a.command, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + a.timeout
    while not done.wait(0.2) and time.monotonic() < deadline:
        if bound_at:
            first.set()
    first.set()
    if profiler:
        profiler.join()
    sched.send_signal(signal.SIGTERM)
    sched.wait(30)
    times = sorted(bound_at.values())
    result = {"label": a.label, "shape": a.shape, "pods": a.pods, "bound": len(times)}
    if len(times) >= 2:
        span = times[-1] - times[0]
        result.update(seconds_first_to_last_bind=round(span, 2),
                      pods_per_second=round((len(times) - 1) / span, 1))
    print(json.dumps(result))
    return 0 if len(times) == a.pods else 1


def delete_slices():
    call("DELETE", f"{RESOURCE}/resourceslices?fieldSelector=spec.driver%3Dneuron.aws.com")


def clean_pods():
    call("DELETE", f"/api/v1/namespaces/{NS}/pods?gracePeriodSeconds=0")
    # The scheduler puts resource.kubernetes.io/delete-protection on a claim it allocates; the
    # resourceclaim controller, stopped for the run, would take it off.
    _, body = call("GET", f"{RESOURCE}/namespaces/{NS}/resourceclaims")
    names = [c["metadata"]["name"] for c in json.loads(body).get("items", [])
             if c["metadata"].get("finalizers")]
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda n: call("PATCH", f"{RESOURCE}/namespaces/{NS}/resourceclaims/{n}",
                                     {"metadata": {"finalizers": None}},
                                     "application/merge-patch+json"), names))
    call("DELETE", f"{RESOURCE}/namespaces/{NS}/resourceclaims")
    return wait_empty([f"/api/v1/namespaces/{NS}/pods", f"{RESOURCE}/namespaces/{NS}/resourceclaims"])


def wait_empty(paths):
    for _ in range(300):
        if all(not json.loads(call("GET", p + ("&" if "?" in p else "?") + "limit=1")[1])
               .get("items") for p in paths):
            return 0
        time.sleep(1)
    print(f"still not empty: {paths}", file=sys.stderr)
    return 1


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("load").add_argument("ndjson")
    r = sub.add_parser("run")
    r.add_argument("--shape", choices=["ext", "dra1", "dra4", "dra16"], required=True)
    r.add_argument("--pods", type=int, default=1000)
    r.add_argument("--label", required=True)
    r.add_argument("--timeout", type=float, default=900)
    r.add_argument("--profile", help="write the scheduler's CPU profile here")
    r.add_argument("--profile-seconds", type=int, default=20)
    r.add_argument("command", nargs="+")
    for name in ("delete-slices", "clean-pods", "clean"):
        sub.add_parser(name)
    a = p.parse_args()
    if a.cmd == "load":
        load(a.ndjson)
        return 0
    if a.cmd == "run":
        return run(a)
    if a.cmd == "delete-slices":
        delete_slices()
        return wait_empty([f"{RESOURCE}/resourceslices?fieldSelector=spec.driver%3Dneuron.aws.com"])
    rc = clean_pods()
    if a.cmd == "clean":
        delete_slices()
        call("DELETE", f"/api/v1/nodes?labelSelector={NODE_SELECTOR}")
        rc |= wait_empty([f"/api/v1/nodes?labelSelector={NODE_SELECTOR}",
                          f"{RESOURCE}/resourceslices?fieldSelector=spec.driver%3Dneuron.aws.com"])
    return rc


if __name__ == "__main__":
    sys.exit(main())
