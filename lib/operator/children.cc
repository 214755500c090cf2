// File: lib/operator/children.cc (placeholder until written)
#include "lib/operator/children.h"
