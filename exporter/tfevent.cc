#include "exporter/tfevent.h"

#include <cstring>

namespace mt::exporter {

namespace {

// Minimal protobuf wire-format reader over a byte range; every read is bounds-checked.
class Wire {
 public:
  explicit Wire(std::string_view b) : b_(b) {}
  bool done() const { return pos_ >= b_.size(); }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return false;
      unsigned char c = static_cast<unsigned char>(b_[pos_++]);
      *v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) return true;
    }
    return false;
  }
  bool Fixed64(uint64_t* v) {
    if (b_.size() - pos_ < 8) return false;
    *v = 0;
    for (int i = 7; i >= 0; --i) *v = (*v << 8) | static_cast<unsigned char>(b_[pos_ + i]);
    pos_ += 8;
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (b_.size() - pos_ < 4) return false;
    *v = 0;
    for (int i = 3; i >= 0; --i) *v = (*v << 8) | static_cast<unsigned char>(b_[pos_ + i]);
    pos_ += 4;
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n = 0;
    if (!Varint(&n) || n > b_.size() - pos_) return false;
    *out = b_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  // Reads a field key; wire type in *type.
  bool Key(uint64_t* field, int* type) {
    uint64_t k = 0;
    if (!Varint(&k)) return false;
    *field = k >> 3;
    *type = static_cast<int>(k & 7);
    return *field != 0;
  }
  bool Skip(int type) {
    uint64_t u64;
    uint32_t u32;
    std::string_view sv;
    switch (type) {
      case 0: return Varint(&u64);
      case 1: return Fixed64(&u64);
      case 2: return Bytes(&sv);
      case 5: return Fixed32(&u32);
      default: return false;  // groups (3/4) do not occur in these messages
    }
  }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

double AsDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
float AsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// SummaryMetadata { PluginData plugin_data = 1 { string plugin_name = 1; } }
bool PluginName(std::string_view metadata, std::string* name) {
  Wire w(metadata);
  while (!w.done()) {
    uint64_t f;
    int t;
    if (!w.Key(&f, &t)) return false;
    if (f == 1 && t == 2) {
      std::string_view pd;
      if (!w.Bytes(&pd)) return false;
      Wire p(pd);
      while (!p.done()) {
        uint64_t pf;
        int pt;
        if (!p.Key(&pf, &pt)) return false;
        if (pf == 1 && pt == 2) {
          std::string_view n;
          if (!p.Bytes(&n)) return false;
          *name = std::string(n);
        } else if (!p.Skip(pt)) {
          return false;
        }
      }
    } else if (!w.Skip(t)) {
      return false;
    }
  }
  return true;
}

// TensorProto { dtype = 1; tensor_shape = 2; tensor_content = 4; float_val = 5; double_val = 6 }
// Returns true and sets *value for a single float or double element.
bool ScalarTensor(std::string_view tensor, double* value) {
  Wire w(tensor);
  uint64_t dtype = 0;
  std::string_view content;
  std::vector<double> vals;
  while (!w.done()) {
    uint64_t f;
    int t;
    if (!w.Key(&f, &t)) return false;
    if (f == 1 && t == 0) {
      if (!w.Varint(&dtype)) return false;
    } else if (f == 4 && t == 2) {
      if (!w.Bytes(&content)) return false;
    } else if (f == 5 && t == 5) {
      uint32_t b;
      if (!w.Fixed32(&b)) return false;
      vals.push_back(AsFloat(b));
    } else if (f == 5 && t == 2) {  // packed floats
      std::string_view packed;
      if (!w.Bytes(&packed) || packed.size() % 4 != 0) return false;
      Wire p(packed);
      uint32_t b;
      while (!p.done() && p.Fixed32(&b)) vals.push_back(AsFloat(b));
    } else if (f == 6 && t == 1) {
      uint64_t b;
      if (!w.Fixed64(&b)) return false;
      vals.push_back(AsDouble(b));
    } else if (f == 6 && t == 2) {  // packed doubles
      std::string_view packed;
      if (!w.Bytes(&packed) || packed.size() % 8 != 0) return false;
      Wire p(packed);
      uint64_t b;
      while (!p.done() && p.Fixed64(&b)) vals.push_back(AsDouble(b));
    } else if (!w.Skip(t)) {
      return false;
    }
  }
  constexpr uint64_t kFloat = 1, kDouble = 2;
  if (!content.empty()) {
    if (dtype == kFloat && content.size() == 4) {
      uint32_t b = 0;
      for (int i = 3; i >= 0; --i) b = (b << 8) | static_cast<unsigned char>(content[i]);
      vals.push_back(AsFloat(b));
    } else if (dtype == kDouble && content.size() == 8) {
      uint64_t b = 0;
      for (int i = 7; i >= 0; --i) b = (b << 8) | static_cast<unsigned char>(content[i]);
      vals.push_back(AsDouble(b));
    }
  }
  if (vals.size() != 1 || (dtype != kFloat && dtype != kDouble)) return false;
  *value = vals[0];
  return true;
}

bool DecodeValue(std::string_view bytes, TfEvent* out) {
  Wire w(bytes);
  std::string tag;
  bool has_simple = false;
  double simple = 0;
  std::string_view tensor, metadata;
  while (!w.done()) {
    uint64_t f;
    int t;
    if (!w.Key(&f, &t)) return false;
    if (f == 1 && t == 2) {
      std::string_view s;
      if (!w.Bytes(&s)) return false;
      tag = std::string(s);
    } else if (f == 2 && t == 5) {
      uint32_t b;
      if (!w.Fixed32(&b)) return false;
      simple = AsFloat(b);
      has_simple = true;
    } else if (f == 8 && t == 2) {
      if (!w.Bytes(&tensor)) return false;
    } else if (f == 9 && t == 2) {
      if (!w.Bytes(&metadata)) return false;
    } else if (!w.Skip(t)) {
      return false;
    }
  }
  if (tag.empty() || tag.ends_with("/text_summary")) return true;
  if (has_simple) {
    out->scalars.emplace_back(std::move(tag), simple);
    return true;
  }
  if (!tensor.empty()) {
    std::string plugin;
    double v = 0;
    if (PluginName(metadata, &plugin) && plugin == "scalars" && ScalarTensor(tensor, &v)) {
      out->scalars.emplace_back(std::move(tag), v);
    }
  }
  return true;
}

}  // namespace

bool DecodeTfEvent(std::string_view record, TfEvent* out) {
  *out = TfEvent{};
  Wire w(record);
  while (!w.done()) {
    uint64_t f;
    int t;
    if (!w.Key(&f, &t)) return false;
    if (f == 1 && t == 1) {
      uint64_t b;
      if (!w.Fixed64(&b)) return false;
      out->wall_time = AsDouble(b);
    } else if (f == 2 && t == 0) {
      uint64_t v;
      if (!w.Varint(&v)) return false;
      out->step = static_cast<int64_t>(v);
    } else if (f == 5 && t == 2) {
      std::string_view summary;
      if (!w.Bytes(&summary)) return false;
      Wire s(summary);
      while (!s.done()) {
        uint64_t sf;
        int st;
        if (!s.Key(&sf, &st)) return false;
        if (sf == 1 && st == 2) {
          std::string_view value;
          if (!s.Bytes(&value) || !DecodeValue(value, out)) return false;
        } else if (!s.Skip(st)) {
          return false;
        }
      }
    } else if (!w.Skip(t)) {
      return false;
    }
  }
  return true;
}

std::string TbMetricName(std::string_view tag) {
  std::string name = "tb_";
  name.reserve(3 + tag.size());
  for (char c : tag) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name += ok ? c : '_';
  }
  return name;
}

}  // namespace mt::exporter
