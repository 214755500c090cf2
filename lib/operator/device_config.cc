// File: lib/operator/device_config.cc (placeholder until written)
#include "lib/operator/device_config.h"
