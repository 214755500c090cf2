// File: lib/base/json_ondemand.h
// What every JSON decoder of ours shares on top of simdjson's On-Demand API (which validates
// what is read and passes over the rest with SIMD, building no tree):
//  - padded input: simdjson reads SIMDJSON_PADDING bytes past the end of the text. JsonInput
//    views a std::string whose capacity already has them, else holds a padded copy;
//  - a parser per thread, reused (its buffers sized to the document), one shared for large
//    documents, or one of its own for a nested parse;
//  - errors as absl::Status saying where (a path the caller names) and what was wrong;
//  - values read whole as nlohmann trees, nesting limited (On-Demand does not count depth; what
//    it passes over it skips iteratively, so deep nesting there costs no stack).
// Only the error-code API is used: nothing here throws.
#pragma once

#include <simdjson.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

// On-Demand is compiled into its callers for the instruction set they are compiled for; without
// AVX2 it would be simdjson's scalar fallback. cmake: neuron_simdjson_sources(<files>).
#if defined(__x86_64__) && !SIMDJSON_CAN_ALWAYS_RUN_HASWELL
#error "compile this file with neuron_simdjson_sources() (cmake/dependencies.cmake)"
#endif

namespace neuron {

struct JsonKeep;  // lib/base/json_prune.h

// Grows `s`'s capacity so that a JsonInput of it needs no copy.
void ReserveJsonPadding(std::string& s);

class JsonInput {
 public:
  // A padded copy of `text` (its buffer is not the caller's to pad). A large one is copied into
  // a buffer shared with the large-document parser, held (one at a time) while this lives.
  explicit JsonInput(std::string_view text);
  // A view of `text` when its capacity has the padding, else a padded copy. `text` must outlive
  // this and must not change meanwhile.
  explicit JsonInput(const std::string& text);
  ~JsonInput();
  JsonInput(const JsonInput&) = delete;
  JsonInput& operator=(const JsonInput&) = delete;

  simdjson::padded_string_view view() const { return view_; }
  const char* data() const { return view_.data(); }
  size_t size() const { return view_.size(); }

 private:
  friend class JsonParser;

  simdjson::padded_string copy_;
  simdjson::padded_string_view view_;
  std::unique_lock<std::mutex> large_;
};

// A parser for one document at a time, chosen at the first Iterate: the thread's own (kept
// between parses) when it is free and the document is not large; one shared by all threads,
// one parse at a time, for large documents (held until this and a JsonInput that copied into
// it are destroyed: declare the input first); else one of its own (a parse inside another).
// Documents it returns live as long as it and their input.
class JsonParser {
 public:
  JsonParser() = default;
  ~JsonParser();
  JsonParser(const JsonParser&) = delete;
  JsonParser& operator=(const JsonParser&) = delete;

  simdjson::simdjson_result<simdjson::ondemand::document> Iterate(const JsonInput& in);

 private:
  simdjson::ondemand::parser* Choose(const JsonInput& in);

  simdjson::ondemand::parser* parser_ = nullptr;
  std::unique_ptr<simdjson::ondemand::parser> own_;
  std::unique_lock<std::mutex> large_;
};

// InvalidArgument "<where>: <what simdjson found>".
absl::Status JsonError(absl::string_view where, simdjson::error_code e);
// As JsonError, with the byte offset the document had reached when it can tell.
absl::Status JsonErrorAt(absl::string_view where, simdjson::error_code e,
                         simdjson::ondemand::document& doc, const JsonInput& in);

// `v` whole as a tree. DEPTH_ERROR when it nests deeper than `max_depth` levels. Integers
// beyond 64 bits become doubles (as nlohmann reads them). Strings must be valid UTF-8 with
// paired surrogates (simdjson refuses what Go would replace with U+FFFD).
simdjson::error_code ReadJsonTree(simdjson::ondemand::value v, int max_depth, nlohmann::json* out);
// The document's root whole (any type, scalars too).
simdjson::error_code ReadJsonTree(simdjson::ondemand::document& doc, int max_depth,
                                  nlohmann::json* out);

// `v` pruned to `keep` (lib/base/json_prune.h), for a reader already iterating a document: a
// list's items one by one.
simdjson::error_code ReadPrunedJson(simdjson::ondemand::value v, const JsonKeep& keep,
                                    int max_depth, nlohmann::json* out);

// The exact text of `v` (a member's or an item's value), consuming it. For scalars the text of
// the token without the whitespace after it.
simdjson::error_code RawJson(simdjson::ondemand::value v, std::string_view* out);

// The text of the scalar token `v` starts with, without the whitespace after it (not consumed,
// not validated: a caller that uses it knows why that is enough).
std::string_view JsonTokenText(simdjson::ondemand::value& v);

// Whether only whitespace follows the root value (call once the root is consumed).
simdjson::error_code ExpectEnd(simdjson::ondemand::document& doc);

}  // namespace neuron
