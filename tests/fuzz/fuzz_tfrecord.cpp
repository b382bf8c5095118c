// libFuzzer target: TFRecord framing (lengths, masked CRCs, resync after corruption) and the
// TensorBoard event records inside, read incrementally as mt-exporter tails a file: the
// input arrives in two polls, the first of them cut at a point the input chooses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "exporter/tfevent.h"
#include "exporter/tfrecord_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mt::exporter;
  if (size < 1) return 0;
  const size_t cut = size > 1 ? data[0] % size : 0;
  std::string all(reinterpret_cast<const char*>(data) + 1, size - 1);
  StringSource src(all.substr(0, cut));
  TfRecordReader::Options o;
  o.max_record_bytes = 4096;
  o.tail_bytes = 1 << 16;
  TfRecordReader reader(o);
  auto on_record = [](std::string_view rec) {
    TfEvent ev;
    (void)DecodeTfEvent(rec, &ev);
  };
  reader.Poll(src, on_record);
  src.data() = all;
  reader.Poll(src, on_record);
  return 0;
}
