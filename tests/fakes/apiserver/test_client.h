// File: tests/fakes/apiserver/test_client.h
// Tiny HTTP helper for the fake apiserver's own tests (httplib only in .cc files of targets that
// link PkgConfig::HTTPLIB; the tests do).
#pragma once

#include <string>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace neuron::fakes::testing {

struct Reply {
  int status = 0;
  nlohmann::json body;
};

inline Reply Call(int port, const std::string& method, const std::string& path,
                  const std::string& body = "",
                  const std::string& content_type = "application/json") {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(30, 0);
  httplib::Result r(nullptr, httplib::Error::Unknown);
  if (method == "GET") {
    r = cli.Get(path.c_str());
  } else if (method == "POST") {
    r = cli.Post(path.c_str(), body, content_type.c_str());
  } else if (method == "PUT") {
    r = cli.Put(path.c_str(), body, content_type.c_str());
  } else if (method == "PATCH") {
    r = cli.Patch(path.c_str(), body, content_type.c_str());
  } else if (method == "DELETE") {
    r = cli.Delete(path.c_str(), body, content_type.c_str());
  }
  Reply out;
  if (!r) return out;
  out.status = r->status;
  out.body = nlohmann::json::parse(r->body, nullptr, false);
  return out;
}

inline Reply Call(int port, const std::string& method, const std::string& path,
                  const nlohmann::json& body,
                  const std::string& content_type = "application/json") {
  return Call(port, method, path, body.dump(), content_type);
}

inline Reply Call(int port, const std::string& method, const std::string& path, const char* body,
                  const std::string& content_type = "application/json") {
  return Call(port, method, path, std::string(body), content_type);
}

}  // namespace neuron::fakes::testing
