#!/usr/bin/env bash
# Assembles the runtime filesystem of one binary's image: the binary as
# /usr/local/bin/<name> (and /usr/local/bin/entrypoint, a link to it), every shared library
# `ldd` says it loads at the path it loads it from, the dynamic loader, /etc/passwd and
# /etc/group with the image's user, and an empty /tmp. Nothing else: no shell, no package
# manager. images/Dockerfile copies this tree into a `FROM scratch` stage; scripts/oci-image.py
# packs it into an OCI image without a container daemon.
#   scripts/image-rootfs.sh BINARY_PATH OUT_DIR
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BINARY_PATH OUT_DIR" >&2
  exit 2
fi
bin=$1
out=$2
name=$(basename "$bin")
[ -x "$bin" ] || { echo "image-rootfs: $bin is not an executable (build first: make build)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/usr/local/bin" "$out/etc" "$out/tmp"
chmod 1777 "$out/tmp"
# Debug info stays in the build (the release preset builds with -g); the image gets none.
install -m 0755 "$bin" "$out/usr/local/bin/$name"
strip --strip-debug "$out/usr/local/bin/$name"
ln -s "$name" "$out/usr/local/bin/entrypoint"

# Libraries as the loader finds them, plus the loader itself (the line with no "=>"). Paths are
# taken with their directories resolved (Debian's usrmerge makes /lib a link to usr/lib); a
# versioned name that is a link to the real file stays a link beside it.
ldd "$bin" | awk '/=> \//{print $3} /^\t\//{print $1}' | sort -u | while read -r lib; do
  path="$(readlink -f "$(dirname "$lib")")/$(basename "$lib")"
  real=$(readlink -f "$lib")
  mkdir -p "$out$(dirname "$real")"
  [ -e "$out$real" ] || cp "$real" "$out$real"
  if [ "$path" != "$real" ] && [ ! -e "$out$path" ]; then
    mkdir -p "$out$(dirname "$path")"
    ln -sr "$out$real" "$out$path"  # relative: valid in the image and from outside it
  fi
done
# The merged top-level directories, as on the host, so /lib64/ld-linux-x86-64.so.2 (the
# interpreter path inside the binary) resolves.
for dir in lib lib64; do
  if [ -L "/$dir" ] && [ ! -e "$out/$dir" ]; then ln -s "$(readlink "/$dir")" "$out/$dir"; fi
done

# The node agent and device plugin run as root (the kubelet's socket directory and the host
# paths they use are root's); the operator and the extender as an unprivileged user.
cat >"$out/etc/passwd" <<PASSWD
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat >"$out/etc/group" <<GROUP
root:x:0:
nonroot:x:65532:
GROUP
echo "image-rootfs: $name -> $out ($(du -sh "$out" | cut -f1))"
