#!/usr/bin/env python3
"""scripts/check_const_json_index.py finds every const json key lookup in a bad sample (the
lines marked BAD, counting "(two)" as two) and nothing in a good one.

Usage: const_json_index_check_test.py SOURCE_DIR CXX
"""
import os
import re
import subprocess
import sys


def run(checker, cxx, sample):
    r = subprocess.run([sys.executable, checker, "--cxx", cxx, "--file", sample],
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout, r.stderr


def main():
    src, cxx = sys.argv[1], sys.argv[2]
    checker = os.path.join(src, "scripts", "check_const_json_index.py")
    data = os.path.join(src, "tests", "base", "testdata")
    failures = []

    bad = os.path.join(data, "const_json_index_bad.cc")
    expected = {}
    with open(bad, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if "// BAD" in line:
                expected[n] = 2 if "(two)" in line else 1
    rc, out, err = run(checker, cxx, bad)
    found = {}
    for m in re.finditer(r":(\d+):\d+: operator\[\]", out):
        found[int(m.group(1))] = found.get(int(m.group(1)), 0) + 1
    if rc != 1:
        failures.append(f"bad sample: exit {rc}, want 1\n{out}{err}")
    if found != expected:
        failures.append(f"bad sample: found {sorted(found.items())}, "
                        f"want {sorted(expected.items())}\n{out}{err}")

    rc, out, err = run(checker, cxx, os.path.join(data, "const_json_index_good.cc"))
    if rc != 0:
        failures.append(f"good sample: exit {rc}, want 0\n{out}{err}")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {sum(expected.values())} findings in the bad sample, none in the good one")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
