#!/usr/bin/env python3
"""Finds operator[] with a key on a const nlohmann::json: undefined behaviour when the key is
missing (nlohmann asserts in debug builds and reads past the map's end in release builds).
Reads must go through lib/base/json_access.h (Member, MemberAt, MemberOrNull, StringOf, ...).

How: the compiler decides, not a text pattern. The checker copies nlohmann/json.hpp into a
scratch include directory, marks the three const key overloads of operator[] (`key_type const&`,
`T*`, `KeyType&&`) [[deprecated("<marker>")]], and runs each translation unit's own compile
command with -fsyntax-only and that directory first on the include path (as a system directory,
so nlohmann's own internal calls stay silent). Every deprecation warning carrying the marker at a
file under the checked directories is a finding. Overload resolution, `auto`, aliases, members,
function results, templates and macros are all seen exactly as the real build sees them.

Limits:
  - Only code that is compiled is checked: translation units listed in compile_commands.json
    (and the headers they include), with that build's configuration. Code behind an #if that
    build does not take, or a template never instantiated with a const json, is not seen.
  - Only key lookups: a const array index (`j[0]`) and the JSON-pointer overload (which throws
    rather than misbehaves) are not flagged. Non-const operator[] inserts and is not flagged.
  - A lookup that is safe because a contains() check precedes it is flagged too: write it with
    the accessor instead, that is the rule.
  - The nlohmann header must still declare the overloads as 3.11 does; if the patch does not
    apply to exactly three declarations the checker stops with an error rather than pass.

Usage:
  check_const_json_index.py [-p BUILD] [-j N] [DIR ...]     # TUs under DIRs (default lib cmd)
  check_const_json_index.py --file X.cc [--cxx c++] [-I DIR]  # one file, for tests
  check_const_json_index.py [-p BUILD] --shadow-dir DIR     # only write DIR/nlohmann/json.hpp
make lint uses the last form: clang-tidy, which parses every translation unit anyway, takes DIR
first on the include path and fails on the marker's deprecation warning, so the tree is parsed
once for both checks (and clang-tidy's result cache covers this one too).
Exit status: 0 clean, 1 findings (printed as file:line:col), 2 the checker could not run.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARKER = "NEURON_CONST_JSON_KEY_INDEX"
# The const key overloads of basic_json::operator[] in nlohmann 3.11.
OVERLOAD = re.compile(
    r"^(\s*)(const_reference operator\[\]\("
    r"(?:const typename object_t::key_type& key|T\* key|KeyType && key)\) const)\s*$")
FINDING = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?:warning|error): .*" +
                     MARKER)


def fail(msg):
    print(f"check_const_json_index: {msg}", file=sys.stderr)
    sys.exit(2)


def find_json_header(cxx, flags):
    """The nlohmann/json.hpp the compiler would include with `flags`."""
    src = "#include <nlohmann/json.hpp>\n"
    r = subprocess.run([cxx, "-x", "c++", "-std=c++20", *flags, "-M", "-"], input=src,
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        fail(f"cannot locate nlohmann/json.hpp: {r.stderr.strip()}")
    for tok in r.stdout.replace("\\\n", " ").split():
        if tok.endswith("/nlohmann/json.hpp"):
            return tok
    fail("cannot locate nlohmann/json.hpp in the compiler's dependency list")
    return None


def make_shadow(header, scratch):
    """scratch/nlohmann/json.hpp: `header` with the const key overloads deprecated."""
    with open(header, encoding="utf-8") as f:
        lines = f.read().split("\n")
    patched = 0
    for i, line in enumerate(lines):
        m = OVERLOAD.match(line)
        if m:
            lines[i] = f'{m.group(1)}[[deprecated("{MARKER}")]] {m.group(2)}'
            patched += 1
    if patched != 3:
        fail(f"{header}: expected 3 const key overloads of operator[], found {patched} "
             "(a different nlohmann version? update OVERLOAD)")
    os.makedirs(os.path.join(scratch, "nlohmann"), exist_ok=True)
    with open(os.path.join(scratch, "nlohmann", "json.hpp"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def syntax_only(argv, scratch):
    """A compile command rewritten to check syntax only, the scratch header first."""
    out = [argv[0], "-isystem", scratch]
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-g") or a.startswith("-O"):
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-Wdeprecated-declarations",
                  "-Wno-error=deprecated-declarations"]


def check(cmd, cwd, roots):
    """(findings, error) for one compile command."""
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    findings = []
    for line in r.stderr.splitlines():
        m = FINDING.match(line)
        if not m:
            continue
        path = os.path.realpath(os.path.join(cwd, m.group("file")))
        if any(path.startswith(root + os.sep) or path == root for root in roots):
            findings.append(f"{path}:{m.group('line')}:{m.group('col')}: operator[] with a key "
                            "on a const nlohmann::json (UB when missing): use "
                            "lib/base/json_access.h")
    error = None if r.returncode == 0 else r.stderr.strip()
    return findings, error


def write_shadow(build, scratch):
    """The patched header for the compile database's first translation unit's compiler."""
    db = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db):
        fail(f"{db} not found: configure the build first (cmake --preset release)")
    with open(db, encoding="utf-8") as f:
        entry = json.load(f)[0]
    argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    if os.path.basename(argv[0]) == "ccache":
        argv = argv[1:]
    flags = [a for a in argv if a.startswith("-I") or a.startswith("-isystem")]
    make_shadow(find_json_header(argv[0], flags), scratch)
    print(f"check_const_json_index: {MARKER} header in {scratch}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-p", "--build", default="build", help="directory of compile_commands.json")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--file", help="check this one file (no compile database)")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("--shadow-dir", help="write the patched header under this directory, stop")
    ap.add_argument("dirs", nargs="*", default=["lib", "cmd"])
    args = ap.parse_args()
    if args.shadow_dir:
        return write_shadow(args.build, args.shadow_dir)

    with tempfile.TemporaryDirectory(prefix="const-json-index-") as scratch:
        if args.file:
            flags = [f"-I{d}" for d in args.includes]
            make_shadow(find_json_header(args.cxx, flags), scratch)
            path = os.path.realpath(args.file)
            cmd = syntax_only([args.cxx, "-std=c++20", *flags, path], scratch)
            jobs = [(cmd, os.getcwd())]
            roots = [path]
        else:
            db = os.path.join(args.build, "compile_commands.json")
            if not os.path.exists(db):
                fail(f"{db} not found: configure the build first (cmake --preset release)")
            with open(db, encoding="utf-8") as f:
                entries = json.load(f)
            roots = [os.path.realpath(d) for d in args.dirs]
            jobs = []
            flags = None
            for e in entries:
                path = os.path.realpath(os.path.join(e["directory"], e["file"]))
                if not any(path.startswith(root + os.sep) for root in roots):
                    continue
                argv = e["arguments"] if "arguments" in e else shlex.split(e["command"])
                if flags is None:
                    flags = [a for a in argv if a.startswith("-I") or a.startswith("-isystem")]
                jobs.append((argv, e["directory"]))
            if not jobs:
                fail(f"no translation unit under {' '.join(args.dirs)} in {db}")
            make_shadow(find_json_header(jobs[0][0][0], flags), scratch)
            jobs = [(syntax_only(argv, scratch), cwd) for argv, cwd in jobs]

        findings, errors = set(), []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for found, error in pool.map(lambda j: check(j[0], j[1], roots), jobs):
                findings.update(found)
                if error:
                    errors.append(error)
    for f in sorted(findings):
        print(f)
    if errors:
        print("\n\n".join(errors), file=sys.stderr)
        fail(f"{len(errors)} translation unit(s) did not compile: findings may be incomplete")
    if findings:
        print(f"check_const_json_index: {len(findings)} finding(s)", file=sys.stderr)
        return 1
    print(f"check_const_json_index: {len(jobs)} translation unit(s) clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
