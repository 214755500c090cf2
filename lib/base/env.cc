#include "lib/base/env.h"

#include <cstdlib>
#include <utility>

namespace neuron {

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at startup only
  if (value == nullptr || *value == '\0') {
    return fallback;
  }
  return value;
}

}  // namespace neuron
