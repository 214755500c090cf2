// File: lib/base/sha256.h
// SHA-256 through OpenSSL's EVP interface (every binary links OpenSSL already, for TLS): the DRA
// checkpoint checksum, device-group IDs (a SHA-256 prefix, as AWS's EFA driver derives them, so
// both sides of a matchAttribute constraint agree) and OCI content digests.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace neuron {

// Streaming: Update any number of times, then HexDigest once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // 64 lower-case hex digits of everything passed to Update; the object is spent afterwards.
  // "" when OpenSSL could not allocate its context (a digest that matches nothing).
  std::string HexDigest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// 64 lower-case hex digits of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace neuron
