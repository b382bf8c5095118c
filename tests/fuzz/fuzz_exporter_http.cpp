// libFuzzer target: mt-exporter's request-head parser (the only bytes a scraper, or anyone
// on the network, sends it) and its Accept-Encoding reader.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "exporter/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mt::exporter;
  std::string_view buf(reinterpret_cast<const char*>(data), size);
  HttpRequestHead head;
  size_t used = 0;
  std::string error;
  if (ParseRequestHead(buf, &head, &used, &error) == HeadParse::kComplete && used > size) __builtin_trap();
  (void)AcceptsGzip(buf);
  std::string e2;
  (void)ParseListenAddress(buf.substr(0, 64), &e2);
  return 0;
}
