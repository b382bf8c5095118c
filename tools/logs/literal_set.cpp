#include "tools/logs/literal_set.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace mt::tools {

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
  if (literals_.empty()) throw std::invalid_argument("LiteralSet: no literals");
  m_ = SIZE_MAX;
  for (const auto& l : literals_) {
    if (l.size() < 3) throw std::invalid_argument("LiteralSet: literal shorter than 3 bytes: " + l);
    m_ = std::min(m_, l.size());
  }
  const size_t max_shift = std::min<size_t>(m_ - 2, 255);
  shift_.assign(65536, static_cast<uint8_t>(max_shift));
  for (size_t id = 0; id < literals_.size(); ++id) {
    const auto* p = reinterpret_cast<const unsigned char*>(literals_[id].data());
    // Block ending at index j (0-based, j in [2, m-1]) may shift the window by m-1-j.
    for (size_t j = 2; j < m_; ++j) {
      uint32_t h = Hash(p + j - 2);
      shift_[h] = static_cast<uint8_t>(std::min<size_t>(shift_[h], m_ - 1 - j));
    }
    uint32_t prefix = 0;
    const size_t plen = std::min<size_t>(4, literals_[id].size());
    std::memcpy(&prefix, literals_[id].data(), plen);
    uint32_t mask = plen == 4 ? 0xFFFFFFFFu : (1u << (8 * plen)) - 1;
    tails_.push_back({Hash(p + m_ - 3), static_cast<int>(id), prefix, mask});
  }
  std::sort(tails_.begin(), tails_.end());
  if (tails_.size() >= UINT16_MAX) throw std::invalid_argument("LiteralSet: too many literals");
  tail_start_.assign(65536, UINT16_MAX);
  for (size_t i = tails_.size(); i-- > 0;) tail_start_[tails_[i].hash] = static_cast<uint16_t>(i);
}

bool LiteralSet::Verify(const char* data, size_t n, size_t start, uint32_t h, Hit* hit) const {
  uint16_t first = tail_start_[h];
  if (first == UINT16_MAX) return false;
  uint32_t head = 0;
  const bool has_head = start + 4 <= n;
  if (has_head) std::memcpy(&head, data + start, 4);
  for (size_t i = first; i < tails_.size() && tails_[i].hash == h; ++i) {
    const Tail& t = tails_[i];
    if (has_head && t.prefix != (head & t.mask)) continue;
    const std::string& lit = literals_[static_cast<size_t>(t.id)];
    if (start + lit.size() <= n && std::memcmp(data + start, lit.data(), lit.size()) == 0) {
      hit->pos = start;
      hit->id = t.id;
      return true;
    }
  }
  return false;
}

bool LiteralSet::FindFirst(const char* data, size_t n, size_t from, Hit* hit) const {
  const auto* u = reinterpret_cast<const unsigned char*>(data);
  const uint8_t* shift = shift_.data();
  size_t pos = from + m_ - 1;   // index of the window's last byte
  while (pos < n) {
    uint32_t h = Hash(u + pos - 2);
    uint8_t s = shift[h];
    if (s != 0) {
      pos += s;
      continue;
    }
    // Several literals can share a window start; the sorted tails give the lowest id
    // first among those of the same hash, which is all callers need.
    if (Verify(data, n, pos - (m_ - 1), h, hit)) return true;
    ++pos;
  }
  return false;
}

void LiteralSet::FindHits(const char* data, size_t n, size_t from, std::vector<Hit>* hits) const {
  hits->clear();
  if (from >= n || n - from < m_) return;
  constexpr int kLanes = 4;
  const auto* u = reinterpret_cast<const unsigned char*>(data);
  const uint8_t* shift = shift_.data();
  const size_t span = n - from;
  const size_t slice = (span + kLanes - 1) / kLanes;
  // Lane k owns window starts in [from + k*slice, from + (k+1)*slice); its window ends
  // (`pos`) run up to that bound + m - 1 but never past n.
  size_t pos[kLanes], end[kLanes];
  std::vector<Hit> lane_hits[kLanes];
  for (int k = 0; k < kLanes; ++k) {
    size_t start = from + std::min(span, slice * static_cast<size_t>(k));
    size_t stop = from + std::min(span, slice * static_cast<size_t>(k + 1));
    pos[k] = start + m_ - 1;
    end[k] = std::min(n, stop + m_ - 1);
  }
  // One probe of lane k: skip, or verify a window whose last block ends a literal.
  auto probe = [&](int k) __attribute__((always_inline)) {
    uint32_t h = Hash(u + pos[k] - 2);
    uint8_t s = shift[h];
    if (s != 0) {
      pos[k] += s;
      return;
    }
    Hit hit;
    if (Verify(data, n, pos[k] - (m_ - 1), h, &hit)) lane_hits[k].push_back(hit);
    ++pos[k];
  };
  static_assert(kLanes == 4, "the unrolled round below assumes four lanes");
  // Rounds of four independent probes while every lane has work; then each lane alone.
  while (pos[0] < end[0] && pos[1] < end[1] && pos[2] < end[2] && pos[3] < end[3]) {
    probe(0);
    probe(1);
    probe(2);
    probe(3);
  }
  for (int k = 0; k < kLanes; ++k)
    while (pos[k] < end[k]) probe(k);
  for (auto& lh : lane_hits) hits->insert(hits->end(), lh.begin(), lh.end());
}

void LiteralSet::FindAll(const char* data, size_t n, std::vector<int>* ids) const {
  ids->clear();
  const auto* u = reinterpret_cast<const unsigned char*>(data);
  size_t pos = m_ - 1;
  while (pos < n) {
    uint32_t h = Hash(u + pos - 2);
    if (shift_[h] != 0) {
      pos += shift_[h];
      continue;
    }
    size_t start = pos - (m_ - 1);
    uint16_t first = tail_start_[h];
    for (size_t i = first; first != UINT16_MAX && i < tails_.size() && tails_[i].hash == h; ++i) {
      const std::string& lit = literals_[static_cast<size_t>(tails_[i].id)];
      if (start + lit.size() <= n && std::memcmp(data + start, lit.data(), lit.size()) == 0)
        ids->push_back(tails_[i].id);
    }
    ++pos;
  }
  std::sort(ids->begin(), ids->end());
  ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
}

}  // namespace mt::tools
