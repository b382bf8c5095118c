#include "tests/unit/launcher/test_util.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "launcher/demo/embedded_scenarios.h"

namespace mt::launch::test {
namespace fs = std::filesystem;

sim::Scenario CaseStudy(const std::string& job_id) {
  for (const auto& e : demo::EmbeddedScenarios()) {
    sim::Scenario s;
    std::string err;
    if (!sim::ParseScenario(e.yaml, e.file_name, &s, &err)) throw std::runtime_error(err);
    if (s.job_id == job_id) return s;
  }
  throw std::runtime_error("no case study " + job_id);
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

ScratchDir::ScratchDir() {
  std::string tmpl = (fs::temp_directory_path() / "mt-launcher-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {

uint32_t BitwiseCrc32c(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

uint64_t LittleEndian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) return false;
      const uint8_t b = *p++;
      *v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool Bytes(std::string* s) {
    uint64_t n;
    if (!Varint(&n) || n > static_cast<uint64_t>(end - p)) return false;
    s->assign(reinterpret_cast<const char*>(p), n);
    p += n;
    return true;
  }
};

bool DecodeValue(const std::string& bytes, std::pair<std::string, float>* out) {
  Reader r{reinterpret_cast<const uint8_t*>(bytes.data()), reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()};
  while (r.p < r.end) {
    uint64_t key;
    if (!r.Varint(&key)) return false;
    if (key == ((1 << 3) | 2)) {
      if (!r.Bytes(&out->first)) return false;
    } else if (key == ((2 << 3) | 5)) {
      if (r.end - r.p < 4) return false;
      const uint32_t bits = static_cast<uint32_t>(LittleEndian(r.p, 4));
      std::memcpy(&out->second, &bits, 4);
      r.p += 4;
    } else {
      return false;  // nothing else is expected in our files
    }
  }
  return true;
}

bool DecodeEvent(const std::string& bytes, DecodedEvent* ev) {
  Reader r{reinterpret_cast<const uint8_t*>(bytes.data()), reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()};
  while (r.p < r.end) {
    uint64_t key;
    if (!r.Varint(&key)) return false;
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    if (field == 1 && wire == 1) {
      if (r.end - r.p < 8) return false;
      const uint64_t bits = LittleEndian(r.p, 8);
      std::memcpy(&ev->wall_time, &bits, 8);
      r.p += 8;
    } else if (field == 2 && wire == 0) {
      uint64_t v;
      if (!r.Varint(&v)) return false;
      ev->step = static_cast<int64_t>(v);
    } else if (field == 3 && wire == 2) {
      if (!r.Bytes(&ev->file_version)) return false;
    } else if (field == 5 && wire == 2) {
      std::string summary;
      if (!r.Bytes(&summary)) return false;
      Reader s{reinterpret_cast<const uint8_t*>(summary.data()),
               reinterpret_cast<const uint8_t*>(summary.data()) + summary.size()};
      while (s.p < s.end) {
        uint64_t k;
        std::string value;
        if (!s.Varint(&k) || k != ((1 << 3) | 2) || !s.Bytes(&value)) return false;
        std::pair<std::string, float> v;
        if (!DecodeValue(value, &v)) return false;
        ev->values.push_back(v);
      }
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

bool DecodeEventFile(const std::string& bytes, std::vector<DecodedEvent>* out, std::string* error) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 12) return *error = "truncated header at " + std::to_string(pos), false;
    const uint64_t len = LittleEndian(p + pos, 8);
    if (Unmask(static_cast<uint32_t>(LittleEndian(p + pos + 8, 4))) != BitwiseCrc32c(p + pos, 8))
      return *error = "bad length CRC at " + std::to_string(pos), false;
    if (len > bytes.size() - pos - 16) return *error = "truncated record at " + std::to_string(pos), false;
    const uint8_t* data = p + pos + 12;
    if (Unmask(static_cast<uint32_t>(LittleEndian(data + len, 4))) != BitwiseCrc32c(data, len))
      return *error = "bad data CRC at " + std::to_string(pos), false;
    DecodedEvent ev;
    if (!DecodeEvent(std::string(reinterpret_cast<const char*>(data), len), &ev))
      return *error = "bad Event protobuf at " + std::to_string(pos), false;
    out->push_back(std::move(ev));
    pos += 12 + len + 4;
  }
  return true;
}

}  // namespace mt::launch::test
