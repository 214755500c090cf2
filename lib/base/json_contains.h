// File: lib/base/json_contains.h
// Whether a live API object already holds everything a desired (applied) object sets: the test
// that lets a controller skip a server-side apply that would change nothing. The server adds
// defaults, status and metadata of its own, so the live object is a superset; a value the
// server normalises differently (a quantity, an omitted empty list) reads as "not contained",
// which only costs one apply that was not needed.
#pragma once

#include "nlohmann/json.hpp"

namespace neuron {

// Objects: every key of `desired` is contained in `live` (an empty object or array in
// `desired` also matches a missing key, as the API drops empty fields). Arrays: same length,
// element by element. Scalars: equal.
bool JsonContains(const nlohmann::json& live, const nlohmann::json& desired);

}  // namespace neuron
