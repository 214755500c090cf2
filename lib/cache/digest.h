// File: lib/cache/digest.h
// Content digests as OCI writes them ("sha256:<64 lowercase hex>") on lib/base/sha256.h (blobs
// are hashed as they arrive), and the syntax check every digest from the network goes through.
#pragma once

#include <string>
#include <string_view>

namespace neuron::cache {

// "sha256:<hex>" of `data`.
std::string Sha256Digest(std::string_view data);

// True for exactly "sha256:" followed by 64 lowercase hex digits (the only algorithm we accept).
bool IsValidDigest(std::string_view digest);

}  // namespace neuron::cache
