// Debian's Abseil keeps its own string_view type (not an alias of std::string_view), so
// std::string_view does not convert to it; Sv() does, at the calls into Abseil.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace neuron::cache {

inline absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view StdSv(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace neuron::cache
