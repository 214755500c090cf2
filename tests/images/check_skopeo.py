#!/usr/bin/env python3
"""The README's push path, with Debian's skopeo: scripts/build-images.sh packs each image as an
OCI layout that skopeo finds by its tag (`oci:build/images/neuron-operator:dev`), skopeo reads
the architecture, entrypoint and user we wrote, and a copy (what `skopeo copy oci:...
docker://...` does before it uploads) reads every blob. Cheap: the "binaries" are copies of
/bin/true (check_images.py covers the real ones). Also scripts/oci-image.py given a whole
reference, as scripts/olm.sh's BUNDLE_IMG can be.

Exits 0 when everything holds, 1 on any failure, 77 (skipped) when skopeo is not installed
(scripts/setup-deps.sh installs it).

  tests/images/check_skopeo.py SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def skopeo(*args):
    r = subprocess.run(["skopeo", *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"     skopeo {' '.join(args)}: {r.stderr.strip()}")
    return r


# What scripts/build-images.sh gives each image.
USERS = {
    "neuron-operator": "65532:65532",
    "neuron-scheduler-extender": "65532:65532",
    "neuron-node-agent": "0:0",
    "neuron-device-plugin": "0:0",
}


def ref_name(layout):
    with open(os.path.join(layout, "index.json")) as f:
        return json.load(f)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]


def check_image(layout, name):
    expect(ref_name(layout) == "dev", f"{name}: index.json names the tag alone")
    r = skopeo("inspect", f"oci:{layout}:dev")
    expect(r.returncode == 0, f"{name}: skopeo inspect oci:DIR:dev finds the image")
    if r.returncode == 0:
        info = json.loads(r.stdout)
        expect(info.get("Architecture") == "amd64", f"{name}: architecture amd64")
        expect(info.get("Os") == "linux", f"{name}: os linux")
        expect((info.get("Labels") or {}).get("org.opencontainers.image.title") == name,
               f"{name}: title label")
    r = skopeo("inspect", "--config", f"oci:{layout}:dev")
    expect(r.returncode == 0, f"{name}: skopeo inspect --config oci:DIR:dev")
    if r.returncode == 0:
        config = json.loads(r.stdout).get("config", {})
        expect(config.get("Entrypoint") == ["/usr/local/bin/entrypoint"], f"{name}: entrypoint")
        expect(config.get("User") == USERS[name], f"{name}: user {USERS[name]}")


def main():
    src = sys.argv[1]
    if shutil.which("skopeo") is None:
        print("SKIP skopeo is not installed (scripts/setup-deps.sh installs it)")
        return 77
    work = tempfile.mkdtemp(prefix="neuron-skopeo-")
    try:
        bin_dir = os.path.join(work, "bin")
        os.makedirs(bin_dir)
        for name in USERS:
            shutil.copy(shutil.which("true"), os.path.join(bin_dir, name))
        images = os.path.join(work, "images")
        subprocess.run(["bash", os.path.join(src, "scripts/build-images.sh")], check=True,
                       stdout=subprocess.DEVNULL,
                       env=dict(os.environ, NEURON_BIN_DIR=bin_dir, IMAGES_DIR=images))
        for name in USERS:
            check_image(os.path.join(images, name), name)
        operator = os.path.join(images, "neuron-operator")
        # skopeo really looks the reference up: another name is not this image.
        expect(skopeo("inspect", f"oci:{operator}:neuron-operator:dev").returncode != 0,
               "oci:DIR:<another ref> is not found")
        expect(skopeo("--insecure-policy", "copy", "--quiet", f"oci:{operator}:dev",
                      f"dir:{os.path.join(work, 'copied')}").returncode == 0,
               "skopeo copy oci:DIR:dev reads every blob")

        # A whole reference (olm.sh's BUNDLE_IMG): its tag is what the index records.
        bundle = os.path.join(work, "bundle")
        subprocess.run([sys.executable, os.path.join(src, "scripts/oci-image.py"),
                        os.path.join(images, "rootfs", "neuron-operator"), bundle, "--tag",
                        "registry.example:5000/neuron/neuron-operator-bundle:v1.2.3"],
                       check=True, stdout=subprocess.DEVNULL)
        expect(ref_name(bundle) == "v1.2.3", "a reference's tag is recorded")
        expect(skopeo("inspect", f"oci:{bundle}:v1.2.3").returncode == 0,
               "skopeo inspect oci:DIR:v1.2.3 finds it")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("skopeo: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
