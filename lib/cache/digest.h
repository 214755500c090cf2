// File: lib/cache/digest.h
// Content digests as OCI writes them ("sha256:<64 lowercase hex>"): a streaming SHA-256 so blobs
// are hashed as they arrive, and the syntax check every digest from the network goes through.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace neuron::cache {

// Streaming SHA-256 (OpenSSL EVP). Update any number of times, then Final once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // "sha256:<hex>" of everything passed to Update. The object may not be used afterwards.
  std::string Final();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// "sha256:<hex>" of `data`.
std::string Sha256Digest(std::string_view data);

// True for exactly "sha256:" followed by 64 lowercase hex digits (the only algorithm we accept).
bool IsValidDigest(std::string_view digest);

}  // namespace neuron::cache
