// SHA-256 (FIPS 180-4). Debian's Abseil has no hash of this kind and lib/dra stays free of
// OpenSSL: checkpoints need a checksum, and device-group IDs must equal those AWS's EFA driver
// derives (a SHA-256 prefix), so both sides of a matchAttribute constraint agree.
#ifndef NEURON_LIB_DRA_SHA256_H_
#define NEURON_LIB_DRA_SHA256_H_

#include <string>
#include <string_view>

namespace neuron::dra {

// Lower-case hex digest (64 characters).
std::string Sha256Hex(std::string_view data);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_SHA256_H_
