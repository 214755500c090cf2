#!/usr/bin/python3
"""clang-tidy with a result cache: run-clang-tidy's -clang-tidy-binary, for scripts/lint.sh.

clang-tidy's findings for one translation unit depend only on what the compiler sees (the
preprocessed source, with every header it includes), the flags, the .clang-tidy files that apply
and the clang-tidy version. This wrapper hashes exactly those and replays the stored output and
exit status when the hash was seen before; otherwise it runs clang-tidy and stores what it
printed. Preprocessing costs a fraction of a second where a clang-tidy run costs seconds, so an
unchanged tree lints in a few minutes instead of half an hour.

Preprocessing every unit is then most of a warm lint (0.3-0.5 s each, ~450 units). So, as
ccache's direct mode does, a manifest keyed by the flags and the source file's own bytes lists
every file the preprocessor read for it (clang's -MD, taken while preprocessing) with a digest
of each. When all of them still hash the same, the manifest names the result without running
clang -E at all; otherwise the unit is preprocessed as before and the manifest gains that
variant. Like ccache's, this misses one case: a new header that would now be found ahead of
one the unit included (an earlier include directory). `NEURON_TIDY_DIRECT=0` turns it off.

The source root is replaced by a placeholder in the key and the stored output, so a fresh clone
at another path hits the same entries. An invocation that writes fixes (-export-fixes, -fix) is
never cached.

Environment:
  NEURON_TIDY_CACHE   cache directory (default ~/.cache/neuron-clang-tidy; outside the clone)
  NEURON_CLANG_TIDY   the real clang-tidy (default clang-tidy-14)
  NEURON_TIDY_CXX     the clang that preprocesses for the key (default clang++-14)
  NEURON_TIDY_ROOT    the source root to neutralise (default: this script's repository)
  NEURON_TIDY_DIRECT  0: always preprocess for the key (no manifests)
"""

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT_TOKEN = b"@NEURON_ROOT@"
# Bump when the key's recipe changes, so old entries stop matching.
RECIPE = b"neuron-tidy-cache-v1"
MANIFEST_RECIPE = b"neuron-tidy-manifest-v1"
MANIFEST_VARIANTS = 4  # header states remembered per unit (a branch switch and back hits)


def real_tidy():
    return os.environ.get("NEURON_CLANG_TIDY", "clang-tidy-14")


def run_uncached(argv):
    """Runs clang-tidy itself, passing its output through."""
    return subprocess.run([real_tidy(), *argv], check=False).returncode


def split_args(argv):
    """(options, source file, build dir, extra args) from run-clang-tidy's command line."""
    source = argv[-1]
    build = "."
    extra = []
    for a in argv[:-1]:
        if a.startswith("-p="):
            build = a[3:]
        elif a.startswith("-extra-arg=") or a.startswith("--extra-arg="):
            extra.append(a.split("=", 1)[1])
        elif a.startswith("-extra-arg-before=") or a.startswith("--extra-arg-before="):
            extra.insert(0, a.split("=", 1)[1])
    return source, build, extra


def compile_entry(build, source):
    """The compile_commands.json entry for source, or None."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    for e in entries:  # CMake writes absolute paths: the exact match is the usual case
        if e["file"] == source:
            return e
    want = os.path.realpath(source)
    for e in entries:
        if os.path.realpath(os.path.join(e["directory"], e["file"])) == want:
            return e
    return None


def preprocess_command(entry, extra):
    """The entry's compile command turned into `clang -E` (clang-tidy parses with clang)."""
    argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    if os.path.basename(argv[0]) == "ccache":
        argv = argv[1:]
    out = [os.environ.get("NEURON_TIDY_CXX", "clang++-14")]
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    # GCC-only warning flags only draw "unknown warning option" notes from clang -E.
    return out + extra + ["-E", "-Wno-unknown-warning-option"]


def config_files(source):
    """Contents of every .clang-tidy from the source's directory up to /."""
    chunks = []
    d = os.path.dirname(os.path.realpath(source))
    while True:
        p = os.path.join(d, ".clang-tidy")
        if os.path.isfile(p):
            with open(p, "rb") as f:
                chunks.append(p.encode() + b"\0" + f.read())
        parent = os.path.dirname(d)
        if parent == d:
            return chunks
        d = parent


def tidy_version():
    return subprocess.run([real_tidy(), "--version"], capture_output=True, check=False).stdout


def digest(parts, root):
    h = hashlib.sha256()
    for part in parts:
        h.update(part.replace(root.encode(), ROOT_TOKEN))
        h.update(b"\0\1\0")
    return h.hexdigest()


def cache_key(argv, source, entry, extra, root, version):
    """(result key, files the preprocessor read) from the preprocessed unit; None on failure."""
    with tempfile.TemporaryDirectory(prefix="neuron-tidy-") as tmp:
        depfile = os.path.join(tmp, "deps.d")
        pre = subprocess.run(preprocess_command(entry, extra) + ["-MD", "-MF", depfile],
                             cwd=entry["directory"], capture_output=True, check=False)
        if pre.returncode != 0:
            return None
        deps = read_depfile(depfile, entry["directory"])
    key = digest([RECIPE, version, "\0".join(argv[:-1]).encode(),
                  os.path.relpath(os.path.realpath(source), root).encode(),
                  *config_files(source), pre.stdout], root)
    return key, deps


def read_depfile(path, directory):
    """Absolute paths of the prerequisites in a make-style depfile ("out: a b \\\n c")."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError:
        return None
    text = text.replace("\\\n", " ")
    _, _, prereqs = text.partition(": ")
    paths, word = [], ""
    i = 0
    while i < len(prereqs):
        c = prereqs[i]
        if c == "\\" and i + 1 < len(prereqs) and prereqs[i + 1] == " ":
            word += " "
            i += 2
            continue
        if c.isspace():
            if word:
                paths.append(word)
            word = ""
        else:
            word += c
        i += 1
    if word:
        paths.append(word)
    return sorted({os.path.normpath(os.path.join(directory, p)) for p in paths})


def file_digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    except OSError:
        return None


def manifest_path(cache, argv, source, entry, extra, root, version):
    """Where the unit's manifest lives: keyed by everything but the headers it includes."""
    with open(source, "rb") as f:
        text = f.read()
    key = digest([MANIFEST_RECIPE, version, "\0".join(argv[:-1]).encode(),
                  os.path.relpath(os.path.realpath(source), root).encode(),
                  "\0".join(preprocess_command(entry, extra)).encode(),
                  entry["directory"].encode(), *config_files(source), text], root)
    return os.path.join(cache, "manifests", key[:2], key + ".json")


def manifest_lookup(path, root):
    """The result key of the first remembered variant whose files all hash as they did."""
    try:
        with open(path, encoding="utf-8") as f:
            variants = json.load(f)
    except (OSError, ValueError):
        return None
    for v in variants if isinstance(variants, list) else []:
        try:
            if all(file_digest(p.replace(ROOT_TOKEN.decode(), root)) == d for p, d in v["deps"]):
                return v["key"]
        except (KeyError, TypeError, ValueError):
            return None
    return None


def manifest_record(path, key, deps, root):
    variant = {"key": key, "deps": []}
    for p in deps:
        d = file_digest(p)
        if d is None:  # read by clang -E, gone now: nothing to check it against later
            return
        variant["deps"].append([p.replace(root, ROOT_TOKEN.decode()), d])
    try:
        with open(path, encoding="utf-8") as f:
            old = [v for v in json.load(f) if v.get("key") != key]
    except (OSError, ValueError, AttributeError):
        old = []
    write_atomic(path, [variant, *old][:MANIFEST_VARIANTS])


def replay(path, root):
    with open(path, "rb") as f:
        stored = json.load(f)
    sys.stdout.buffer.write(stored["stdout"].encode().replace(ROOT_TOKEN, root.encode()))
    sys.stderr.buffer.write(stored["stderr"].encode().replace(ROOT_TOKEN, root.encode()))
    os.utime(path)  # recently used: scripts/lint.sh prunes entries unused for weeks
    return stored["returncode"]


def store(path, result, root):
    def neutral(b):
        return b.replace(root.encode(), ROOT_TOKEN).decode("utf-8", "replace")

    write_atomic(path, {"stdout": neutral(result.stdout), "stderr": neutral(result.stderr),
                        "returncode": result.returncode})


def write_atomic(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(value, f)
    os.replace(tmp, path)  # whole or absent, whatever runs beside us


def main(argv):
    if any(a.startswith(("-export-fixes", "--export-fixes", "-fix", "--fix")) for a in argv):
        return run_uncached(argv)
    root = os.path.realpath(os.environ.get(
        "NEURON_TIDY_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
    cache = os.environ.get("NEURON_TIDY_CACHE",
                           os.path.join(os.path.expanduser("~"), ".cache", "neuron-clang-tidy"))
    source, build, extra = split_args(argv)
    entry = compile_entry(build, source)
    if entry is None:  # not in the database: clang-tidy reports it itself
        return run_uncached(argv)
    version = tidy_version()
    manifest = None
    if os.environ.get("NEURON_TIDY_DIRECT", "1") != "0":
        manifest = manifest_path(cache, argv, source, entry, extra, root, version)
        key = manifest_lookup(manifest, root)
        if key is not None:
            result = try_replay(os.path.join(cache, key[:2], key + ".json"), root)
            if result is not None:
                os.utime(manifest)
                return result
    keyed = cache_key(argv, source, entry, extra, root, version)
    if keyed is None:  # clang -E failed: clang-tidy reports it itself
        return run_uncached(argv)
    key, deps = keyed
    path = os.path.join(cache, key[:2], key + ".json")
    result = try_replay(path, root)
    if result is not None:
        if manifest and deps is not None:
            manifest_record(manifest, key, deps, root)
        return result
    result = subprocess.run([real_tidy(), *argv], capture_output=True, check=False)
    sys.stdout.buffer.write(result.stdout)
    sys.stderr.buffer.write(result.stderr)
    if result.returncode >= 0:  # a signal is not a result
        store(path, result, root)
        if manifest and deps is not None:
            manifest_record(manifest, key, deps, root)
    return result.returncode


def try_replay(path, root):
    """The stored exit status after writing the stored output, or None if there is none."""
    if not os.path.exists(path):
        return None
    try:
        return replay(path, root)
    except (OSError, ValueError, KeyError):
        return None  # a damaged entry: run again and overwrite it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
