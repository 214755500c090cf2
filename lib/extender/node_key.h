// File: lib/extender/node_key.h
// The key of the cluster view's node table: a node name kept inside the table's own slot when
// it fits (EC2 names are 24-46 bytes), so that a lookup compares it without following a
// pointer to the heap. A filter looks up hundreds of names in thousands of nodes per call, and
// that second cache miss per name was the largest single cost of the lookup. Longer names are
// kept on the heap as usual. Looked up by any string-like value (NodeKeyHash/NodeKeyEq are
// transparent), hashing exactly as absl::Hash<absl::string_view> does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace neuron::extender {

class NodeKey {
 public:
  static constexpr size_t kInline = 55;

  NodeKey(std::string_view name)  // NOLINT(google-explicit-constructor): a key, as a string is
      : size_(name.size() <= kInline ? static_cast<uint8_t>(name.size()) : kLong) {
    if (size_ == kLong) {
      long_.assign(name);
    } else {
      std::memcpy(inline_.data(), name.data(), name.size());
    }
  }
  NodeKey(const std::string& name) : NodeKey(std::string_view(name)) {}  // NOLINT: as above
  NodeKey(const char* name) : NodeKey(std::string_view(name)) {}         // NOLINT: as above

  std::string_view view() const {
    return size_ == kLong ? std::string_view(long_) : std::string_view(inline_.data(), size_);
  }
  std::string str() const { return std::string(view()); }

 private:
  static constexpr uint8_t kLong = 0xff;
  uint8_t size_;
  std::array<char, kInline> inline_{};
  std::string long_;
};

inline std::string_view KeyView(const NodeKey& k) { return k.view(); }
inline std::string_view KeyView(std::string_view s) { return s; }
inline std::string_view KeyView(absl::string_view s) { return {s.data(), s.size()}; }
inline std::string_view KeyView(const std::string& s) { return s; }
inline std::string_view KeyView(const char* s) { return s; }

struct NodeKeyHash {
  using is_transparent = void;
  template <typename K>
  size_t operator()(const K& k) const {
    const std::string_view v = KeyView(k);
    return absl::Hash<absl::string_view>()(absl::string_view(v.data(), v.size()));
  }
};

struct NodeKeyEq {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return KeyView(a) == KeyView(b);
  }
};

}  // namespace neuron::extender
