// File: lib/base/status_macros.h
// Early-return helpers for absl::Status / absl::StatusOr, shaped like Abseil's own
// (absl/status/status_macros.h ships only from LTS 20260526; swap to it when Debian does).
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NEURON_RETURN_IF_ERROR(expr)                        \
  do {                                                      \
    if (absl::Status neuron_s_ = (expr); !neuron_s_.ok()) { \
      return neuron_s_;                                     \
    }                                                       \
  } while (false)

#define NEURON_CAT_(a, b) a##b
#define NEURON_CAT(a, b) NEURON_CAT_(a, b)

// Expands to several statements (as Abseil's does): never use it as an unbraced if-body.
#define NEURON_ASSIGN_OR_RETURN(lhs, rexpr) \
  NEURON_ASSIGN_OR_RETURN_(NEURON_CAT(neuron_so_, __LINE__), lhs, rexpr)
// tmp is a name and lhs a declaration ("int x"): parentheses around them would not compile.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define NEURON_ASSIGN_OR_RETURN_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                             \
  if (!tmp.ok()) {                                \
    return std::move(tmp).status();               \
  }                                               \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
