# Every dependency comes from Debian bookworm packages (scripts/setup-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(absl REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(prometheus-cpp REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(Catch2 REQUIRED)
find_package(benchmark REQUIRED)
# libpci and cpp-httplib ship only pkg-config files. cpp-httplib's .pc adds the
# CPPHTTPLIB_*_SUPPORT defines its compiled .so was built with: every includer needs them.
pkg_check_modules(LIBPCI REQUIRED IMPORTED_TARGET libpci)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
