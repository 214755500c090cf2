#include "tests/testing/http_get.h"

#include <httplib.h>

namespace neuron::testing {

namespace {
HttpResult From(const httplib::Result& r) {
  HttpResult out;
  if (!r) {
    out.error = httplib::to_string(r.error());
    return out;
  }
  out.status = r->status;
  out.body = r->body;
  out.content_type = r->get_header_value("Content-Type");
  out.content_encoding = r->get_header_value("Content-Encoding");
  return out;
}
}  // namespace

HttpResult HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  return From(client.Get(path));
}

HttpResult HttpGetRaw(int port, const std::string& path,
                      const std::multimap<std::string, std::string>& headers) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  client.set_decompress(false);
  httplib::Headers h(headers.begin(), headers.end());
  return From(client.Get(path, h));
}

HttpResult HttpPost(int port, const std::string& path, const std::string& body,
                    const std::string& content_type) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  return From(client.Post(path, body, content_type));
}

}  // namespace neuron::testing
