#!/usr/bin/env python3
"""scripts/clang_tidy_cached.py against the real clang-tidy-14 and clang++-14: what it runs and
what it replays, counted through wrappers that log each real run.

A unit whose header defines USE_NS draws a google-build-using-namespace finding; the header
flips it. Checks that an unchanged unit replays without preprocessing (the manifest), that a
changed header misses, that an earlier header state hits again, that the preprocessed key still
works alone (NEURON_TIDY_DIRECT=0), that a copy at another path (a fresh clone) hits, and that
a change the preprocessor drops (a comment) costs a preprocess but no clang-tidy run.

Usage: clang_tidy_cache_test.py SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

FINDING = "google-build-using-namespace"
UNIT = ("#include \"inc/h.h\"\n#if USE_NS\nnamespace foo {}\nusing namespace foo;\n#endif\n"
        "int main() { return 0; }  // version 1\n")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def make_project(root):
    write(os.path.join(root, ".clang-tidy"), "Checks: '-*,google-build-using-namespace'\n")
    write(os.path.join(root, "inc", "h.h"), "#pragma once\n#define USE_NS 1\n")
    write(os.path.join(root, "src", "a.cc"), UNIT)
    build = os.path.join(root, "build")
    os.makedirs(build, exist_ok=True)
    source = os.path.join(root, "src", "a.cc")
    with open(os.path.join(build, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump([{"directory": build, "file": source,
                    "command": f"clang++-14 -I{root} -std=c++17 -o a.o -c {source}"}], f)
    return build, source


def counting_wrapper(path, real, log, skip_arg=None):
    skip = f'[ "$1" = "{skip_arg}" ] || ' if skip_arg else ""
    write(path, f"#!/bin/sh\n{skip}echo run >> {log}\nexec {real} \"$@\"\n")
    os.chmod(path, 0o755)


def count(log):
    if not os.path.exists(log):
        return 0
    with open(log, encoding="utf-8") as f:
        return len(f.readlines())


def main():
    wrapper = os.path.join(sys.argv[1], "scripts", "clang_tidy_cached.py")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tidy_log, cxx_log = os.path.join(tmp, "tidy.log"), os.path.join(tmp, "cxx.log")
        counting_wrapper(os.path.join(tmp, "tidy.sh"), "clang-tidy-14", tidy_log, "--version")
        counting_wrapper(os.path.join(tmp, "cxx.sh"), "clang++-14", cxx_log)
        env = dict(os.environ, NEURON_CLANG_TIDY=os.path.join(tmp, "tidy.sh"),
                   NEURON_TIDY_CXX=os.path.join(tmp, "cxx.sh"),
                   NEURON_TIDY_CACHE=os.path.join(tmp, "cache"))

        def lint(root, build, source, step, finding, tidy_runs, preprocesses, **extra):
            r = subprocess.run([sys.executable, wrapper, f"-p={build}", "-quiet", source],
                               env=dict(env, NEURON_TIDY_ROOT=root, **extra),
                               capture_output=True, text=True, check=False)
            got = (FINDING in r.stdout, count(tidy_log), count(cxx_log))
            want = (finding, tidy_runs, preprocesses)
            ok = got == want and r.returncode == 0 and (not finding or source in r.stdout)
            print(("ok   " if ok else "FAIL ") + f"{step}: (finding, clang-tidy runs, "
                  f"preprocesses) = {got}" + ("" if ok else f", want {want}\n{r.stdout}{r.stderr}"))
            if not ok:
                failures.append(step)

        root = os.path.join(tmp, "one")
        build, source = make_project(root)
        header = os.path.join(root, "inc", "h.h")
        lint(root, build, source, "first run", True, 1, 1)
        lint(root, build, source, "unchanged: replayed, not preprocessed", True, 1, 1)
        os.utime(header, (1, 1))
        lint(root, build, source, "header touched, same bytes: replayed", True, 1, 1)
        write(header, "#pragma once\n#define USE_NS 0\n")
        lint(root, build, source, "header changed: preprocessed and linted", False, 2, 2)
        write(header, "#pragma once\n#define USE_NS 1\n")
        lint(root, build, source, "header back: the first variant replayed", True, 2, 2)
        lint(root, build, source, "NEURON_TIDY_DIRECT=0: preprocessed key hits", True, 2, 3,
             NEURON_TIDY_DIRECT="0")
        other = os.path.join(tmp, "two")
        shutil.copytree(root, other, ignore=shutil.ignore_patterns("build"))
        build2, source2 = make_project(other)
        lint(other, build2, source2, "a copy at another path: replayed", True, 2, 3)
        write(source2, UNIT.replace("version 1", "version 2"))  # a comment: -E drops it
        lint(other, build2, source2, "source comment: preprocessed, same result replayed",
             True, 2, 4)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
