#!/usr/bin/env python3
"""The images as shipped: for each binary, scripts/image-rootfs.sh builds its filesystem and the
binary must run from it alone (`--help` inside a chroot of that tree, in a user namespace; where
user namespaces are not allowed, through the image's own dynamic loader with every library
checked to resolve inside the tree). Then scripts/oci-image.py packs it and the OCI layout is
checked: index -> manifest -> config and layer blobs with matching digests and sizes, the
layer's diff_id, the entrypoint and user in the config, the entrypoint present in the layer.

  tests/images/check_images.py BIN_DIR SOURCE_DIR
"""
import gzip
import hashlib
import io
import json
import mmap
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

BINARIES = {
    "neuron-operator": "65532:65532",
    "neuron-scheduler-extender": "65532:65532",
    "neuron-node-agent": "0:0",
    "neuron-device-plugin": "0:0",
}
failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run_in_chroot(rootfs):
    """--help output from inside the tree, or None when user namespaces are not allowed here."""
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    # An empty environment, as a container starts with; so chroot needs its full path.
    r = subprocess.run([shutil.which("unshare"), "--user", "--map-root-user",
                        shutil.which("chroot"), rootfs, "/usr/local/bin/entrypoint", "--help"],
                       capture_output=True, text=True, env={})
    return r.returncode, r.stdout + r.stderr


def run_with_image_loader(rootfs):
    """--help through the image's loader; every library it maps must come from the tree."""
    loader = os.path.join(rootfs, "lib64", "ld-linux-x86-64.so.2")
    libdirs = ":".join(os.path.join(rootfs, d) for d in
                       ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"))
    binary = os.path.join(rootfs, "usr/local/bin/entrypoint")
    trace = subprocess.run([loader, "--inhibit-cache", "--library-path", libdirs, binary],
                           capture_output=True, text=True,
                           env={"LD_TRACE_LOADED_OBJECTS": "1"})
    real_root = os.path.realpath(rootfs)
    for line in trace.stdout.splitlines():
        if "=>" in line:
            target = line.split("=>")[1].split("(")[0].strip()
            expect(os.path.realpath(target).startswith(real_root),
                   f"library from the image: {line.strip()}")
    r = subprocess.run([loader, "--inhibit-cache", "--library-path", libdirs, binary, "--help"],
                       capture_output=True, text=True, env={})
    return r.returncode, r.stdout + r.stderr


def blob(layout, digest):
    algo, hexd = digest.split(":", 1)
    with open(os.path.join(layout, "blobs", algo, hexd), "rb") as f:
        data = f.read()
    expect(hashlib.sha256(data).hexdigest() == hexd, f"blob {digest[:19]} matches its digest")
    return data


def check_layout(layout, name, user):
    with open(os.path.join(layout, "oci-layout")) as f:
        expect(json.load(f).get("imageLayoutVersion") == "1.0.0", f"{name}: oci-layout")
    with open(os.path.join(layout, "index.json")) as f:
        index = json.load(f)
    expect(len(index["manifests"]) == 1, f"{name}: one manifest")
    desc = index["manifests"][0]
    # The tag alone, as `skopeo copy oci:DIR:test` looks it up (check_skopeo.py runs skopeo).
    expect(desc["annotations"]["org.opencontainers.image.ref.name"] == "test", f"{name}: tagged")
    manifest_raw = blob(layout, desc["digest"])
    expect(len(manifest_raw) == desc["size"], f"{name}: manifest size")
    manifest = json.loads(manifest_raw)
    config_raw = blob(layout, manifest["config"]["digest"])
    expect(len(config_raw) == manifest["config"]["size"], f"{name}: config size")
    config = json.loads(config_raw)
    expect(config["config"]["User"] == user, f"{name}: runs as {user}")
    expect(config["config"]["Entrypoint"] == ["/usr/local/bin/entrypoint"], f"{name}: entrypoint")
    expect(len(manifest["layers"]) == 1, f"{name}: one layer")
    layer = blob(layout, manifest["layers"][0]["digest"])
    expect(len(layer) == manifest["layers"][0]["size"], f"{name}: layer size")
    raw = gzip.decompress(layer)
    expect("sha256:" + hashlib.sha256(raw).hexdigest() == config["rootfs"]["diff_ids"][0],
           f"{name}: diff_id is the uncompressed layer's digest")
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        names = set(tar.getnames())
        expect(f"usr/local/bin/{name}" in names and "usr/local/bin/entrypoint" in names,
               f"{name}: binary and entrypoint in the layer")
        expect(all(m.uid == 0 and m.mtime == 0 for m in tar.getmembers()),
               f"{name}: reproducible entries (root-owned, mtime 0)")
        expect(not any(n.endswith("/sh") or n == "bin/sh" for n in names), f"{name}: no shell")
    print(f"     {name}: layer {len(layer) // 1024} KiB compressed")


def sanitized(binary):
    """True for a sanitizer build. GCC links the runtime as a library and clang links it into the
    binary, so ldd tells only of GCC's; either way the binary names the runtime's entry points."""
    with open(binary, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return any(data.find(s) != -1 for s in (b"__asan_init", b"__tsan_init", b"__ubsan_handle_"))


def main():
    bin_dir, src = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="neuron-images-")
    try:
        for name, user in BINARIES.items():
            rootfs = os.path.join(work, "rootfs", name)
            subprocess.run(["bash", os.path.join(src, "scripts/image-rootfs.sh"),
                            os.path.join(bin_dir, name), rootfs], check=True)
            # Sanitizer runtimes read /proc, which a bare chroot lacks: sanitized builds (the
            # ASan suite runs this test too) take the loader path.
            result = None if sanitized(os.path.join(bin_dir, name)) else run_in_chroot(rootfs)
            how = "chroot"
            if result is None:
                result, how = run_with_image_loader(rootfs), "the image's loader"
            code, out = result
            expect(code == 0 and f"Usage: {name}" in out,
                   f"{name}: --help runs from the image filesystem ({how})")
            layout = os.path.join(work, "oci", name)
            subprocess.run([sys.executable, os.path.join(src, "scripts/oci-image.py"), rootfs,
                            layout, "--tag", "test", "--user", user], check=True)
            check_layout(layout, name, user)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("images: all checks passed")


if __name__ == "__main__":
    main()
