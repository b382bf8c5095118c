// Finds any of a fixed set of literal strings in a byte range, fast: the prefilter the log
// scanner runs over every byte before it looks at a line in detail.
//
// Wu–Manber with 3-byte blocks: a 64 Ki-entry shift table lets the search skip up to
// (shortest literal − 2) bytes per probe, so noise-heavy logs are crossed at memory speed
// and only the few windows whose last block belongs to some literal are verified.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mt::tools {

class LiteralSet {
 public:
  struct Hit {
    size_t pos = 0;   // offset of the literal's first byte
    int id = -1;      // index into the constructor's vector
  };

  // Every literal must be at least 3 bytes long; duplicates are allowed (first id wins).
  explicit LiteralSet(std::vector<std::string> literals);

  // The occurrence with the smallest start offset >= `from` in [data, data + n).
  bool FindFirst(const char* data, size_t n, size_t from, Hit* hit) const;

  // Every occurrence with start offset >= `from`, in ascending order of start (one hit per
  // start offset). Runs four independent skip loops over four slices of the range at
  // once: each loop is bound by load latency, so interleaving them keeps the core busy.
  void FindHits(const char* data, size_t n, size_t from, std::vector<Hit>* hits) const;

  // Ids of every literal that occurs anywhere in [data, data + n), each once, ascending.
  void FindAll(const char* data, size_t n, std::vector<int>* ids) const;

  const std::string& literal(int id) const { return literals_[static_cast<size_t>(id)]; }
  size_t size() const { return literals_.size(); }

 private:
  // Hash of the 3-byte block starting at p (multiplicative: spreads the few hundred
  // literal blocks over the 64 Ki table with few collisions).
  static uint32_t Hash(const unsigned char* p) {
    uint32_t x = uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16);
    return (x * 2654435761u) >> 16;
  }
  bool Verify(const char* data, size_t n, size_t start, uint32_t h, Hit* hit) const;

  std::vector<std::string> literals_;
  size_t m_ = 0;                          // shortest literal length
  std::vector<uint8_t> shift_;            // per block hash
  // Literals whose m-th block hashes to h, as (h, id) sorted by h, and for each h the
  // index of its first entry (UINT16_MAX when none): consulted only on a zero shift.
  struct Tail {
    uint32_t hash;
    int id;
    uint32_t prefix;     // the literal's first 4 bytes: rejects most candidates without memcmp
    uint32_t mask;       // bytes of `prefix` that belong to the literal (3-byte literals)
    bool operator<(const Tail& o) const { return hash != o.hash ? hash < o.hash : id < o.id; }
  };
  std::vector<Tail> tails_;
  std::vector<uint16_t> tail_start_;
};

}  // namespace mt::tools
