// File: lib/base/sha256.cc
#include "lib/base/sha256.h"

#include <openssl/evp.h>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace neuron {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  // Allocation failure is the only way these fail: Update is then a no-op and HexDigest "".
  if (ctx_->md != nullptr && EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_->md);
    ctx_->md = nullptr;
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_->md); }

void Sha256::Update(std::string_view data) {
  if (ctx_->md != nullptr && !data.empty()) EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}

std::string Sha256::HexDigest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (ctx_->md == nullptr || EVP_DigestFinal_ex(ctx_->md, out, &len) != 1) return "";
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(out), len));
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.HexDigest();
}

}  // namespace neuron
