// File: tests/base/sha256_test.cc
#include "lib/base/sha256.h"

#include <catch2/catch.hpp>
#include <string>

namespace neuron {
namespace {

TEST_CASE("SHA-256 matches the FIPS 180-4 examples", "[base][sha256]") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("streamed pieces hash as the whole", "[base][sha256]") {
  const std::string data(100000, 'q');
  for (size_t piece : {1, 63, 64, 65, 4096}) {
    Sha256 h;
    for (size_t at = 0; at < data.size(); at += piece) {
      h.Update(std::string_view(data).substr(at, piece));
    }
    CHECK(h.HexDigest() == Sha256Hex(data));
  }
}

}  // namespace
}  // namespace neuron
