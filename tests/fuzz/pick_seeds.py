#!/usr/bin/env python3
"""Picks a small seed corpus out of a large campaign corpus.

libFuzzer's -merge=1 keeps every input that adds a feature, which after a long campaign is
hundreds of files. Here that merge (on edges only, -use_counters=0) gives the candidates; each
candidate is then run alone to learn every edge it reaches (a merge control file's COV line), and
a greedy set cover keeps the inputs that add the most edges, up to --max files, smallest first on
ties. The seeds checked in under tests/fuzz/corpus/ stay small and reach (nearly) all of the
campaign's coverage.

  tests/fuzz/pick_seeds.py build/asan/bin/k8s_watch_fuzz OUT_DIR CORPUS_DIR... [--max 40]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("out")
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--max", type=int, default=40)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        merged = os.path.join(tmp, "merged")
        os.mkdir(merged)
        Merge(args.binary, tmp, merged, args.corpora)
        paths = [os.path.join(merged, n) for n in sorted(os.listdir(merged))]
        cov = {}
        for i, path in enumerate(paths):
            one = os.path.join(tmp, f"one{i}")
            os.mkdir(one)
            shutil.copy(path, one)
            # A fresh, empty output each time: merge counts its files as already covered.
            out = os.path.join(tmp, f"out{i}")
            cov[i] = Merge(args.binary, tmp, out, [one]).get(0, set())
            shutil.rmtree(one)
            shutil.rmtree(out)
        Pick(args, paths, cov)


def Merge(binary, tmp, out, corpora):
    """Runs libFuzzer's merge into `out`; returns {file index: edges it added}."""
    control = os.path.join(tmp, "control")
    os.makedirs(out, exist_ok=True)
    subprocess.run([binary, "-merge=1", "-use_counters=0", f"-merge_control_file={control}", out,
                    *corpora], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(control) as f:
        lines = f.read().splitlines()
    os.remove(control)
    cov = {}
    for line in lines[2 + int(lines[0]):]:
        parts = line.split()
        if parts and parts[0] == "COV":
            cov[int(parts[1])] = set(parts[2:])
    return cov


def Pick(args, paths, cov):
    size = {i: os.path.getsize(paths[i]) for i in cov}
    covered, picked = set(), []
    everything = set().union(*cov.values()) if cov else set()
    while len(picked) < args.max:
        best = max(cov, key=lambda i: (len(cov[i] - covered), -size[i]), default=None)
        if best is None or not cov[best] - covered:
            break
        picked.append(best)
        covered |= cov.pop(best)

    os.makedirs(args.out, exist_ok=True)
    for i in picked:
        shutil.copy(paths[i], os.path.join(args.out, os.path.basename(paths[i])))
    print(f"{len(picked)} seeds reach {len(covered)} of {len(everything)} edges", file=sys.stderr)


if __name__ == "__main__":
    main()
