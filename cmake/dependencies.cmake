# Every dependency comes from Debian bookworm packages (scripts/setup-deps.sh installs them).
# All of them are required, here and only here: a missing one fails configure naming its package,
# instead of targets being dropped silently further down. Only benchmarks and fuzzing are optional.

# neuron_require(<find_package args...> DEBIAN <package> [WHAT <name>])
macro(neuron_require name)
  cmake_parse_arguments(_req "" "DEBIAN;WHAT" "" ${ARGN})
  find_package(${name} ${_req_UNPARSED_ARGUMENTS} QUIET)
  if(NOT ${name}_FOUND)
    if(NOT _req_WHAT)
      set(_req_WHAT ${name})
    endif()
    message(FATAL_ERROR
      "${_req_WHAT} not found: install ${_req_DEBIAN} (scripts/setup-deps.sh)")
  endif()
endmacro()

# neuron_require_pc(<prefix> <pkg-config module> DEBIAN <package>): for libraries that ship only
# pkg-config files. Defines PkgConfig::<prefix>.
macro(neuron_require_pc prefix module)
  cmake_parse_arguments(_req "" "DEBIAN" "" ${ARGN})
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
  if(NOT ${prefix}_FOUND)
    message(FATAL_ERROR "${module} not found: install ${_req_DEBIAN} (scripts/setup-deps.sh)")
  endif()
endmacro()

neuron_require(PkgConfig DEBIAN pkg-config WHAT pkg-config)
neuron_require(Threads DEBIAN libc6-dev WHAT "POSIX threads")
neuron_require(ZLIB DEBIAN zlib1g-dev WHAT zlib)
neuron_require(OpenSSL DEBIAN libssl-dev)
neuron_require(absl DEBIAN libabsl-dev WHAT Abseil)
neuron_require(spdlog DEBIAN libspdlog-dev)
neuron_require(nlohmann_json DEBIAN nlohmann-json3-dev WHAT "nlohmann JSON")
neuron_require(simdjson DEBIAN libsimdjson-dev)
# simdjson's On-Demand API is compiled into the files that use it, for the instruction set the
# compiler is told of; without it, it is simdjson's scalar fallback. Haswell's set (AVX2, BMI1/2,
# PCLMUL, LZCNT) is on every x86 EC2 instance type since 2014, Neuron ones included. Every file
# that includes lib/base/json_ondemand.h is compiled so (it refuses to compile otherwise), so
# that a program has one On-Demand implementation.
# simdjson turns its development checks on in any file compiled without optimisation, and they add
# members to its parser: test code at -O0 and lib/ at -O2 would disagree on its layout (a crash).
# One value for every includer.
set(NEURON_SIMDJSON_FLAGS -DSIMDJSON_DEVELOPMENT_CHECKS=0)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  list(APPEND NEURON_SIMDJSON_FLAGS -mavx2 -mbmi -mbmi2 -mpclmul -mlzcnt -mpopcnt)
endif()
function(neuron_simdjson_sources)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${NEURON_SIMDJSON_FLAGS}")
endfunction()
neuron_require(yaml-cpp DEBIAN libyaml-cpp-dev)
neuron_require(LibArchive DEBIAN libarchive-dev WHAT libarchive)
neuron_require(prometheus-cpp DEBIAN prometheus-cpp-dev)
neuron_require(Protobuf DEBIAN "libprotobuf-dev protobuf-compiler" WHAT "Protocol Buffers")
neuron_require(gRPC CONFIG DEBIAN "libgrpc++-dev protobuf-compiler-grpc" WHAT "gRPC C++")
neuron_require(Catch2 DEBIAN catch2 WHAT "Catch2 (tests)")
# The protoc plugin comes from a separate package; without it the proto target cannot build.
if(NOT TARGET gRPC::grpc_cpp_plugin)
  message(FATAL_ERROR "grpc_cpp_plugin not found: install protobuf-compiler-grpc "
                      "(scripts/setup-deps.sh)")
endif()
neuron_require_pc(LIBPCI libpci DEBIAN libpci-dev)
# cpp-httplib's .pc adds the CPPHTTPLIB_*_SUPPORT defines its compiled .so was built with: every
# includer needs them.
neuron_require_pc(HTTPLIB cpp-httplib DEBIAN libcpp-httplib-dev)

# Optional parts: say on every configure whether they are built.
if(NEURON_BENCH)
  neuron_require(benchmark DEBIAN libbenchmark-dev WHAT "Google Benchmark (NEURON_BENCH=ON)")
  message(STATUS "neuron: benchmarks ON (bench/; -DNEURON_BENCH=OFF to skip)")
else()
  message(STATUS "neuron: benchmarks OFF (NEURON_BENCH=OFF)")
endif()
if(NEURON_FUZZ)
  message(STATUS "neuron: fuzz targets built as libFuzzer binaries (NEURON_FUZZ=ON)")
else()
  message(STATUS "neuron: fuzz targets run as corpus-replay unit tests (NEURON_FUZZ=OFF; "
                 "the asan preset builds libFuzzer binaries)")
endif()
