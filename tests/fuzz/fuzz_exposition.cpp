// libFuzzer target: Prometheus text exposition as plugins print it (mt-exporter's parser).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exporter/exposition_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)mt::exporter::ParseExposition(text, 1000);
  (void)mt::exporter::ParseExposition(text);
  return 0;
}
