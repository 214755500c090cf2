#!/usr/bin/env bash
# Installs every Debian (bookworm) package the build, tests, fuzzers and benchmarks need.
# Idempotent: exits quickly without touching apt when everything is already present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache lld
  libabsl-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libcpp-httplib-dev nlohmann-json3-dev libpci-dev pciutils libspdlog-dev libfmt-dev
  libyaml-cpp-dev prometheus-cpp-dev libssl-dev zlib1g-dev libbrotli-dev
  catch2 libbenchmark-dev
  clang-14 libclang-rt-14-dev
  clang-format clang-tidy-14
  prometheus curl python3 python3-jsonschema
  skopeo docker-registry apache2-utils libarchive-dev libsimdjson-dev
)

# kubectl drives the fake API server in tests. Any kubectl on PATH will do (some images ship one
# from another repository, which conflicts with Debian's package); otherwise take Debian's.
if ! command -v kubectl >/dev/null 2>&1; then
  PACKAGES+=(kubernetes-client)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
