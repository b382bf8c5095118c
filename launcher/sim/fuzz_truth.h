// The ground truth of a generated case, and its truth.json rendering.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mt::launch::sim {

struct FuzzCase;

struct FuzzPhase {
  std::vector<std::string> hosts;
  int64_t from_step = 0, to_step = -1;
};

struct FuzzDecoy {
  std::string kind, host, detail;
};

struct FuzzTruth {
  uint64_t seed = 0;
  std::string kind = "single";              // single | pair
  std::string family = "none";
  std::vector<std::string> jobs;            // job ids (A, B for a pair)
  std::vector<std::string> hosts;           // every host of the (first) job
  std::string naming;
  std::vector<std::string> culprits;        // hosts to blame (empty: none or uniform)
  bool uniform = false;                     // the fault is on every host alike
  int64_t onset_step = -1, end_step = -1;
  double onset_time = -1;
  std::map<std::string, double> magnitude;
  std::vector<FuzzPhase> phases;
  std::vector<FuzzDecoy> decoys;
  // pairs
  std::string pair;                         // uniform_leak | restore_leak | noise_twins | node_count | rdma_hosts
  bool different = false;                   // B differs from A in a way the TSDB shows
};

std::string TruthJson(const FuzzTruth& t, const FuzzCase& c);

}  // namespace mt::launch::sim
