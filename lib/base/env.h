// File: lib/base/env.h
// Flag defaults that honour the environment variables the AWS images use (PORT, NODE_NAME,
// KUBECONFIG), so our binaries are drop-in replacements. An explicit flag always wins.
#pragma once

#include <string>

namespace neuron {

// The value of environment variable `name`, or `fallback` when it is unset or empty.
std::string EnvOr(const char* name, std::string fallback);

}  // namespace neuron
