// File: lib/base/json_ondemand.cc
#include "lib/base/json_ondemand.h"

#include <charconv>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace neuron {
namespace {

namespace od = simdjson::ondemand;
using nlohmann::json;
using simdjson::error_code;

// A parser keeps buffers of about six bytes per byte of its largest document (a few of them
// touched). Documents up to this size are read by the thread's own parser, kept between parses.
constexpr size_t kReuseLimit = size_t{4} << 20;
constexpr size_t kMinCapacity = size_t{64} << 10;

struct ThreadParser {
  od::parser parser;
  bool busy = false;
};

// Larger documents (a full-Nodes request: 27 MB) share one parser and one buffer for a padded
// copy, one document at a time: fresh ones for each would be page-faulted in again every time
// (that was most of such a request's cost), and one per thread would keep tens of MiB per
// server thread.
struct LargeParser {
  std::mutex mu;
  od::parser parser;
  std::string copy;
};

LargeParser& TheLargeParser() {
  static auto* p = new LargeParser();  // never destroyed: threads may parse during exit
  return *p;
}

// Whether this thread holds the LargeParser: a large parse inside a large one must not wait.
thread_local bool t_holding_large = false;

std::unique_lock<std::mutex> LockLarge() {
  t_holding_large = true;
  return std::unique_lock<std::mutex>(TheLargeParser().mu);
}

ThreadParser& ThisThreadParser() {
  thread_local ThreadParser p;
  return p;
}

std::string_view StripTrailingSpace(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// The number as the narrowest type that holds it: int64, uint64, else double (as nlohmann
// reads integers beyond 64 bits). Out of double's range is an error, as it is for Go.
template <class V>
error_code ReadNumber(V& v, json* out) {
  od::number_type type;
  if (error_code e = v.get_number_type().get(type)) return e;
  int64_t i = 0;
  uint64_t u = 0;
  if (type == od::number_type::signed_integer && v.get_int64().get(i) == simdjson::SUCCESS) {
    *out = i;
    return simdjson::SUCCESS;
  }
  if (type == od::number_type::unsigned_integer && v.get_uint64().get(u) == simdjson::SUCCESS) {
    *out = u;
    return simdjson::SUCCESS;
  }
  double d = 0;  // a fraction, an integer beyond 64 bits, or no number (the error says so)
  if (error_code e = v.get_double().get(d)) return e;
  // simdjson 3.0.1 misrounds some numbers of many digits (0.99...9 with 170 nines read as
  // 1.8e-149): read those again with the standard library, which rounds correctly.
  const std::string_view token = StripTrailingSpace(v.raw_json_token());
  if (token.size() > 17) {
    double exact = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), exact);
    if (ec == std::errc() && end == token.data() + token.size()) d = exact;
  }
  *out = d;
  return simdjson::SUCCESS;
}

template <class V>
error_code ReadTree(V& v, int depth_left, json* out);

error_code ReadObject(od::object object, int depth_left, json* out) {
  *out = json::object();
  for (auto field : object) {
    std::string_view key;
    if (error_code e = field.unescaped_key().get(key)) return e;
    od::value v;
    if (error_code e = field.value().get(v)) return e;
    if (error_code e = ReadTree(v, depth_left, &(*out)[std::string(key)])) return e;
  }
  return simdjson::SUCCESS;
}

error_code ReadArray(od::array array, int depth_left, json* out) {
  *out = json::array();
  for (auto item : array) {
    od::value v;
    if (error_code e = item.get(v)) return e;
    if (error_code e = ReadTree(v, depth_left, &out->emplace_back())) return e;
  }
  return simdjson::SUCCESS;
}

template <class V>
error_code ReadTree(V& v, int depth_left, json* out) {
  od::json_type type;
  if (error_code e = v.type().get(type)) return e;
  switch (type) {
    case od::json_type::object: {
      if (depth_left <= 0) return simdjson::DEPTH_ERROR;
      od::object o;
      if (error_code e = v.get_object().get(o)) return e;
      return ReadObject(o, depth_left - 1, out);
    }
    case od::json_type::array: {
      if (depth_left <= 0) return simdjson::DEPTH_ERROR;
      od::array a;
      if (error_code e = v.get_array().get(a)) return e;
      return ReadArray(a, depth_left - 1, out);
    }
    case od::json_type::string: {
      std::string_view s;
      if (error_code e = v.get_string().get(s)) return e;
      *out = std::string(s);
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (error_code e = v.get_bool().get(b)) return e;
      *out = b;
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (error_code e = v.is_null().get(is_null)) return e;
      if (!is_null) return simdjson::N_ATOM_ERROR;
      *out = nullptr;
      return simdjson::SUCCESS;
    }
    case od::json_type::number:
      return ReadNumber(v, out);
  }
  return simdjson::TAPE_ERROR;
}

}  // namespace

void ReserveJsonPadding(std::string& s) { s.reserve(s.size() + simdjson::SIMDJSON_PADDING); }

JsonInput::JsonInput(std::string_view text) {
  if (text.size() <= kReuseLimit || t_holding_large) {
    copy_ = simdjson::padded_string(text.data(), text.size());
    view_ = simdjson::padded_string_view(copy_);
    return;
  }
  large_ = LockLarge();
  std::string& copy = TheLargeParser().copy;
  copy.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  copy.assign(text.data(), text.size());
  view_ = simdjson::padded_string_view(copy.data(), copy.size(), copy.capacity());
}

JsonInput::JsonInput(const std::string& text)
    : JsonInput(text.capacity() - text.size() >= simdjson::SIMDJSON_PADDING
                    ? std::string_view()
                    : std::string_view(text)) {
  if (text.capacity() - text.size() >= simdjson::SIMDJSON_PADDING) {
    view_ = simdjson::padded_string_view(text.data(), text.size(), text.capacity());
  }
}

JsonInput::~JsonInput() {
  if (large_.owns_lock()) t_holding_large = false;
}

JsonParser::~JsonParser() {
  if (large_.owns_lock()) t_holding_large = false;
  if (own_ || parser_ == nullptr || parser_ == &TheLargeParser().parser) return;
  ThisThreadParser().busy = false;
}

od::parser* JsonParser::Choose(const JsonInput& in) {
  if (in.large_.owns_lock()) return &TheLargeParser().parser;  // locked with the copy
  if (in.size() > kReuseLimit && !t_holding_large) {
    large_ = LockLarge();
    return &TheLargeParser().parser;
  }
  ThreadParser& mine = ThisThreadParser();
  if (!mine.busy) {
    mine.busy = true;
    return &mine.parser;
  }
  // A parse inside another on this thread: the outer document keeps its parser.
  own_ = std::make_unique<od::parser>();
  return own_.get();
}

simdjson::simdjson_result<od::document> JsonParser::Iterate(const JsonInput& in) {
  if (parser_ == nullptr) parser_ = Choose(in);
  // simdjson grows its buffers to exactly the document's size: requests a few bytes longer
  // than the last would reallocate them each time. Grow to a power of two instead.
  if (parser_->capacity() < in.size()) {
    size_t capacity = kMinCapacity;
    while (capacity < in.size()) capacity *= 2;
    if (simdjson::error_code e = parser_->allocate(capacity, parser_->max_depth())) return e;
  }
  return parser_->iterate(in.view());
}

absl::Status JsonError(absl::string_view where, error_code e) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", simdjson::error_message(e)));
}

absl::Status JsonErrorAt(absl::string_view where, error_code e, od::document& doc,
                         const JsonInput& in) {
  const char* at = nullptr;
  // A document that never started (or was abandoned on an error) has no location to tell.
  if (!doc.is_alive() || doc.current_location().get(at) != simdjson::SUCCESS || at < in.data() ||
      at > in.data() + in.size()) {
    return JsonError(where, e);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": ", simdjson::error_message(e), " (near byte ", at - in.data(), ")"));
}

error_code ReadJsonTree(od::value v, int max_depth, json* out) {
  return ReadTree(v, max_depth, out);
}

error_code ReadJsonTree(od::document& doc, int max_depth, json* out) {
  return ReadTree(doc, max_depth, out);
}

error_code RawJson(od::value v, std::string_view* out) {
  od::json_type type;
  if (error_code e = v.type().get(type)) return e;
  if (type == od::json_type::object) {
    od::object o;
    if (error_code e = v.get_object().get(o)) return e;
    if (error_code e = o.raw_json().get(*out)) return e;
    *out = StripTrailingSpace(*out);  // the view runs to the next token
    return simdjson::SUCCESS;
  }
  if (type == od::json_type::array) {
    od::array a;
    if (error_code e = v.get_array().get(a)) return e;
    if (error_code e = a.raw_json().get(*out)) return e;
    *out = StripTrailingSpace(*out);
    return simdjson::SUCCESS;
  }
  const std::string_view token = v.raw_json_token();
  json scalar;  // the token validated (On-Demand checks a scalar only when it is read)
  if (error_code e = ReadTree(v, 0, &scalar)) return e;
  *out = StripTrailingSpace(token);
  return simdjson::SUCCESS;
}

std::string_view JsonTokenText(od::value& v) { return StripTrailingSpace(v.raw_json_token()); }

error_code ExpectEnd(od::document& doc) {
  const char* next = nullptr;
  const error_code e = doc.current_location().get(next);
  if (e == simdjson::OUT_OF_BOUNDS) return simdjson::SUCCESS;  // no token left
  return e ? e : simdjson::TRAILING_CONTENT;
}

}  // namespace neuron
