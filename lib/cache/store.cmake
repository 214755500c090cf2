# Safe layer extraction (libarchive), the node's cache directory (images, staging, entries,
# refs) and compile-cache compatibility. File I/O only; no network, no API server.
neuron_cc_library(NAME cache_store
  SRCS ${CMAKE_CURRENT_LIST_DIR}/layer_path.cc ${CMAKE_CURRENT_LIST_DIR}/layer_overlay.cc
       ${CMAKE_CURRENT_LIST_DIR}/layer_extractor.cc ${CMAKE_CURRENT_LIST_DIR}/store_files.cc
       ${CMAKE_CURRENT_LIST_DIR}/cache_entry.cc ${CMAKE_CURRENT_LIST_DIR}/cache_store.cc
       ${CMAKE_CURRENT_LIST_DIR}/cache_store_records.cc ${CMAKE_CURRENT_LIST_DIR}/cache_store_gc.cc
       ${CMAKE_CURRENT_LIST_DIR}/compile_cache.cc
  DEPS neuron::base neuron::topology absl::status absl::statusor absl::strings absl::time
  PRIVATE_DEPS LibArchive::LibArchive nlohmann_json::nlohmann_json spdlog::spdlog Threads::Threads)
