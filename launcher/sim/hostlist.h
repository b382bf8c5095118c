// Slurm host lists: "chi[2801-2803,2810]" <-> {"chi2801","chi2802","chi2803","chi2810"}.
#pragma once

#include <string>
#include <vector>

namespace mt::launch::sim {

// Compresses a list of host names into Slurm's compact form. Hosts sharing a prefix and
// a numeric suffix of the same width are grouped; the input order is kept per group.
std::string CompactHostList(const std::vector<std::string>& hosts);

// Expands a compact list; returns false (and leaves `out` unspecified) on malformed input.
bool ExpandHostList(const std::string& compact, std::vector<std::string>* out);

}  // namespace mt::launch::sim
