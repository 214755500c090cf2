#include "lib/k8s/credentials.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace neuron::k8s {
namespace {

class Static final : public CredentialProvider {
 public:
  explicit Static(Credentials c) : c_(std::move(c)) {}
  absl::StatusOr<Credentials> Get() override { return c_; }

 private:
  const Credentials c_;
};

}  // namespace

std::shared_ptr<CredentialProvider> StaticCredentials(Credentials c) {
  return std::make_shared<Static>(std::move(c));
}

TokenFileCredentials::TokenFileCredentials(std::string path, Clock& clock, absl::Duration refresh)
    : path_(std::move(path)), clock_(clock), refresh_(refresh) {}

absl::StatusOr<Credentials> TokenFileCredentials::Get() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  if (stale_ || now - read_at_ >= refresh_) {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in.is_open()) {
      if (!token_.empty()) return Credentials{token_, "", ""};  // keep the last good token
      return absl::UnauthenticatedError(absl::StrCat("cannot read token file ", path_));
    }
    token_ = std::string(absl::StripAsciiWhitespace(ss.str()));
    read_at_ = now;
    stale_ = false;
    ++reads_;
  }
  return Credentials{token_, "", ""};
}

void TokenFileCredentials::Invalidate() {
  absl::MutexLock lock(&mu_);
  stale_ = true;
}

int TokenFileCredentials::reads() const {
  absl::MutexLock lock(&mu_);
  return reads_;
}

}  // namespace neuron::k8s
