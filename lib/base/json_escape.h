// File: lib/base/json_escape.h
// Writes a string as a JSON string literal without building a tree: for hot encoders that emit
// hundreds of names per call. Escapes as Go's encoding/json does (quote, backslash, control
// characters; <, >, & and U+2028/U+2029 as \u escapes), and replaces each byte of invalid
// UTF-8 with U+FFFD, so the output is always valid JSON whatever the input bytes.
#pragma once

#include <string>
#include <string_view>

namespace neuron {

// Appends `s` to `out` as a quoted JSON string.
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace neuron
