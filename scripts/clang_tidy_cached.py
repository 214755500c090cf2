#!/usr/bin/python3
"""clang-tidy with a result cache: run-clang-tidy's -clang-tidy-binary, for scripts/lint.sh.

clang-tidy's findings for one translation unit depend only on what the compiler sees (the
preprocessed source, with every header it includes), the flags, the .clang-tidy files that apply
and the clang-tidy version. This wrapper hashes exactly those and replays the stored output and
exit status when the hash was seen before; otherwise it runs clang-tidy and stores what it
printed. Preprocessing costs a fraction of a second where a clang-tidy run costs seconds, so an
unchanged tree lints in a few minutes instead of half an hour.

The source root is replaced by a placeholder in the key and the stored output, so a fresh clone
at another path hits the same entries. An invocation that writes fixes (-export-fixes, -fix) is
never cached.

Environment:
  NEURON_TIDY_CACHE   cache directory (default ~/.cache/neuron-clang-tidy; outside the clone)
  NEURON_CLANG_TIDY   the real clang-tidy (default clang-tidy-14)
  NEURON_TIDY_CXX     the clang that preprocesses for the key (default clang++-14)
  NEURON_TIDY_ROOT    the source root to neutralise (default: this script's repository)
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


def cache_key(argv, source, entry, extra, root):
    pre = subprocess.run(preprocess_command(entry, extra), cwd=entry["directory"],
                         capture_output=True, check=False)
    if pre.returncode != 0:
        return None
    version = subprocess.run([real_tidy(), "--version"], capture_output=True,
                             check=False).stdout
    h = hashlib.sha256()
    for part in [RECIPE, version, "\0".join(argv[:-1]).encode(),
                 os.path.relpath(os.path.realpath(source), root).encode(),
                 *config_files(source), pre.stdout]:
        h.update(part.replace(root.encode(), ROOT_TOKEN))
        h.update(b"\0\1\0")
    return h.hexdigest()


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

    entry = {"stdout": neutral(result.stdout), "stderr": neutral(result.stderr),
             "returncode": result.returncode}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(entry, f)
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
    key = cache_key(argv, source, entry, extra, root) if entry else None
    if key is None:  # not in the database, or clang -E failed: clang-tidy reports it itself
        return run_uncached(argv)
    path = os.path.join(cache, key[:2], key + ".json")
    if os.path.exists(path):
        try:
            return replay(path, root)
        except (OSError, ValueError, KeyError):
            pass  # a damaged entry: run again and overwrite it
    result = subprocess.run([real_tidy(), *argv], capture_output=True, check=False)
    sys.stdout.buffer.write(result.stdout)
    sys.stderr.buffer.write(result.stderr)
    if result.returncode >= 0:  # a signal is not a result
        store(path, result, root)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
