#!/usr/bin/env bash
# Packs a Neuron compile-cache directory (e.g. /var/tmp/neuron-compile-cache) as an OCI image and
# pushes it with skopeo, so NeuronCache objects can pull it onto nodes. The image has one gzip
# layer holding the directory's contents at the image root, built reproducibly (same directory,
# same digest) with standard tools only: GNU tar, gzip, sha256sum, printf.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: pack-neuron-cache.sh [--creds USER:PASS] [--tls-verify=false] [--cert-dir DIR]
                            [--oci-dir OUT] CACHE_DIR docker://HOST/REPO:TAG

Packs CACHE_DIR (a Neuron compile-cache directory) as a one-layer OCI image and pushes it to a
registry with `skopeo copy`. Prints the pushed manifest digest.

  --creds USER:PASS    registry credentials (skopeo --dest-creds)
  --tls-verify=false   do not verify the registry's certificate; also allows plain http
  --cert-dir DIR       directory with the registry's CA as *.crt (skopeo --dest-cert-dir)
  --oci-dir OUT        keep the OCI image layout in OUT (must not exist or be empty)
  -h, --help           this text

Layer: application/vnd.oci.image.layer.v1.tar+gzip, files owned by 0:0 with mtime 0, sorted by
name, so the same directory always gives the same layer digest.
USAGE
}

die() {
  echo "pack-neuron-cache: $*" >&2
  exit 1
}

skopeo_args=()
oci_dir=""
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --creds) [ $# -ge 2 ] || die "--creds needs USER:PASS"; skopeo_args+=(--dest-creds "$2"); shift 2 ;;
    --creds=*) skopeo_args+=(--dest-creds "${1#--creds=}"); shift ;;
    --tls-verify=false) skopeo_args+=(--dest-tls-verify=false); shift ;;
    --tls-verify=true) skopeo_args+=(--dest-tls-verify=true); shift ;;
    --cert-dir) [ $# -ge 2 ] || die "--cert-dir needs DIR"; skopeo_args+=(--dest-cert-dir "$2"); shift 2 ;;
    --cert-dir=*) skopeo_args+=(--dest-cert-dir "${1#--cert-dir=}"); shift ;;
    --oci-dir) [ $# -ge 2 ] || die "--oci-dir needs OUT"; oci_dir=$2; shift 2 ;;
    --oci-dir=*) oci_dir=${1#--oci-dir=}; shift ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -eq 2 ] || { usage >&2; exit 2; }
cache_dir=${positional[0]}
dest=${positional[1]}
[ -d "$cache_dir" ] || die "cache directory $cache_dir does not exist"
[[ "$dest" == docker://?*/?* ]] || die "destination must be docker://HOST/REPO:TAG, got $dest"
command -v skopeo >/dev/null || die "skopeo not found (apt-get install skopeo)"
tar --version 2>/dev/null | grep -q 'GNU tar' || die "GNU tar is required"

# The tag names the image inside the layout; a reference without one means "latest".
name=${dest#docker://}
tag=latest
if [[ "${name##*/}" == *:* ]]; then tag=${name##*:}; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$oci_dir" ]; then
  mkdir -p "$oci_dir"
  [ -z "$(ls -A "$oci_dir")" ] || die "--oci-dir $oci_dir is not empty"
  layout=$oci_dir
else
  layout=$work/layout
fi
blobs=$layout/blobs/sha256
mkdir -p "$blobs"

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { wc -c <"$1" | tr -d ' '; }
# Moves a file into the layout under its digest and prints the digest.
store() {
  local d
  d=$(sha "$1")
  mv "$1" "$blobs/$d"
  echo "$d"
}

tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$cache_dir" -cf "$work/layer.tar" . \
  || die "cannot archive $cache_dir"
diff_id=$(sha "$work/layer.tar")
gzip -n -c "$work/layer.tar" >"$work/layer.tar.gz"
layer_size=$(size "$work/layer.tar.gz")
layer=$(store "$work/layer.tar.gz")

printf '{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$diff_id" >"$work/config.json"
config_size=$(size "$work/config.json")
config=$(store "$work/config.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}],"annotations":{"org.opencontainers.image.title":"neuron-compile-cache"}}' \
  "$config" "$config_size" "$layer" "$layer_size" >"$work/manifest.json"
manifest_size=$(size "$work/manifest.json")
manifest=$(store "$work/manifest.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest" "$manifest_size" "$tag" >"$layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"

# skopeo refuses to run without a signature policy; our own freshly built layout needs no
# signature check, so a host without one gets an accept-anything policy for this copy only.
if [ ! -f "${HOME:-/nonexistent}/.config/containers/policy.json" ] && [ ! -f /etc/containers/policy.json ]; then
  printf '{"default":[{"type":"insecureAcceptAnything"}]}' >"$work/policy.json"
  skopeo_args=(--policy "$work/policy.json" "${skopeo_args[@]}")
fi
# skopeo's global --policy goes before the subcommand; the dest flags after it.
global=()
if [ "${skopeo_args[0]:-}" = --policy ]; then
  global=("${skopeo_args[@]:0:2}")
  skopeo_args=("${skopeo_args[@]:2}")
fi
skopeo "${global[@]}" copy --quiet --preserve-digests --digestfile "$work/digest" \
  "${skopeo_args[@]}" "oci:$layout:$tag" "$dest" || die "skopeo copy to $dest failed"
echo "pushed $dest $(cat "$work/digest") (layer sha256:$layer, $layer_size bytes)"
