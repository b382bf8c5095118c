// Host-naming schemes for generated scenarios. Each name is a prefix and a fixed-width
// number, the shape Slurm's compact host lists (hostlist.h) round-trip.
#include <algorithm>
#include <cstdio>

#include "launcher/sim/fuzz_random.h"

namespace mt::launch::sim {

std::string FuzzHostNames(FuzzRng& r, int n, std::vector<std::string>* hosts) {
  static const std::vector<std::string> kSchemes = {"chi", "node", "gpu-rack", "nid", "mi355x"};
  const std::string scheme = r.Pick(kSchemes);
  hosts->clear();
  int next = static_cast<int>(r.Int(1, scheme == "nid" ? 4000 : scheme == "chi" ? 2900 : 60));
  int rack = static_cast<int>(r.Int(1, 40));
  const int per_rack = static_cast<int>(r.Pick(std::vector<int64_t>{4, 8, 16}));
  int in_rack = static_cast<int>(r.Int(1, 3));
  char buf[64];
  while (static_cast<int>(hosts->size()) < n) {
    if (r.Chance(0.12)) next += static_cast<int>(r.Int(1, 5));   // drained or allocated elsewhere
    if (scheme == "chi") std::snprintf(buf, sizeof buf, "chi%04d", 1000 + next % 8000);
    else if (scheme == "node") std::snprintf(buf, sizeof buf, "node%03d", next % 1000);
    else if (scheme == "nid") std::snprintf(buf, sizeof buf, "nid%06d", next);
    else {
      if (in_rack > per_rack) {
        in_rack = 1;
        rack += static_cast<int>(r.Int(1, 2));
      }
      if (scheme == "gpu-rack") std::snprintf(buf, sizeof buf, "gpu-a%02d-%02d", rack % 100, in_rack);
      else std::snprintf(buf, sizeof buf, "mi355x-r%02dn%02d", rack % 100, in_rack);
      ++in_rack;
    }
    const std::string h = buf;
    if (std::find(hosts->begin(), hosts->end(), h) == hosts->end()) hosts->push_back(h);
    ++next;
  }
  return scheme;
}

}  // namespace mt::launch::sim
