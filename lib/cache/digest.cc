// File: lib/cache/digest.cc
#include "lib/cache/digest.h"

#include <openssl/evp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace neuron::cache {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  // Allocation failure is the only way these fail; a null context makes Update/Final no-ops
  // and Final returns a digest that matches nothing.
  if (ctx_->md != nullptr) EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr);
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_->md); }

void Sha256::Update(std::string_view data) {
  if (ctx_->md != nullptr && !data.empty()) EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}

std::string Sha256::Final() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (ctx_->md == nullptr || EVP_DigestFinal_ex(ctx_->md, out, &len) != 1) {
    return "sha256:unavailable";
  }
  return "sha256:" +
         absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(out), len));
}

std::string Sha256Digest(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.Final();
}

bool IsValidDigest(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.substr(0, kPrefix.size()) != kPrefix || digest.size() != kPrefix.size() + 64) {
    return false;
  }
  for (char c : digest.substr(kPrefix.size())) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

}  // namespace neuron::cache
