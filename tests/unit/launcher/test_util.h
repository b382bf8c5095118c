// Helpers shared by the launcher tests: load a case-study scenario, scratch directories, and
// an independent TFRecord/Event decoder (deliberately different code from the encoder:
// bitwise CRC, hand-rolled protobuf walk).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "launcher/sim/scenario.h"

namespace mt::launch::test {

sim::Scenario CaseStudy(const std::string& job_id);
std::string ReadAll(const std::filesystem::path& p);
std::vector<std::string> Lines(const std::string& text);

// A fresh directory under $TMPDIR, removed by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> values;
};

// Decodes a whole event file; returns false with *error on any framing, CRC or protobuf error.
bool DecodeEventFile(const std::string& bytes, std::vector<DecodedEvent>* out, std::string* error);

}  // namespace mt::launch::test
