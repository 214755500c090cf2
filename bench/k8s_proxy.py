"""The real-cluster benches' API calls, through `kubectl proxy` (PROXY, default :8001).

Shared by real_scheduler_throughput.py and real_scheduler_dra.py. Standard library only.
"""
import concurrent.futures
import json
import os
import urllib.error
import urllib.request

API = os.environ.get("PROXY", "http://127.0.0.1:8001")


def call(method, path, body=None, content_type="application/json"):
    """(status, body bytes); HTTP errors are returned, not raised."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(API + path, data=data, method=method,
                                 headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def post_all(items, workers=32):
    """POSTs each (path, object); an object that exists already (409) is fine."""
    def one(item):
        path, obj = item
        status, body = call("POST", path, obj)
        if status not in (201, 409):
            raise RuntimeError(f"POST {path} {obj['metadata']['name']}: {status} {body[:300]!r}")
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, items))
