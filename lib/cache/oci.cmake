# lib/cache/oci.cmake: image references, manifests, digests, registry credentials (pure, no I/O)
# and the registry client that pulls images over HTTP(S).
neuron_cc_library(NAME cache_oci
  SRCS ${CMAKE_CURRENT_LIST_DIR}/image_reference.cc ${CMAKE_CURRENT_LIST_DIR}/oci_manifest.cc
       ${CMAKE_CURRENT_LIST_DIR}/digest.cc ${CMAKE_CURRENT_LIST_DIR}/registry_auth.cc
  DEPS absl::status absl::statusor absl::strings
  PRIVATE_DEPS neuron::base nlohmann_json::nlohmann_json)

neuron_cc_library(NAME cache_registry
  SRCS ${CMAKE_CURRENT_LIST_DIR}/registry_http.cc ${CMAKE_CURRENT_LIST_DIR}/registry_session.cc
       ${CMAKE_CURRENT_LIST_DIR}/registry_client.cc ${CMAKE_CURRENT_LIST_DIR}/pull_secrets.cc
  DEPS neuron::cache_oci neuron::base nlohmann_json::nlohmann_json absl::status absl::statusor absl::time absl::synchronization
  PRIVATE_DEPS PkgConfig::HTTPLIB OpenSSL::SSL OpenSSL::Crypto nlohmann_json::nlohmann_json)
