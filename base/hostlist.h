// Slurm host lists: "chi[2845-2853,2865,2875]", "node001,node002", "a[01-03],b5" <->
// {"chi2845", …}. Task i of a job with one task per node runs on host i of the expanded
// list. One implementation for the tools (which read JOB_NODELIST from logs), mt-job
// (which reads SLURM_JOB_NODELIST) and the simulator (which writes both).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mt::base {

// Expands a compact host list, keeping zero padding. nullopt when malformed (empty, an
// empty item, unbalanced or nested brackets, a range that is not digits or runs
// backwards) or when it would expand to more than `limit` hosts.
std::optional<std::vector<std::string>> ExpandHostList(std::string_view list, size_t limit = 100000);

// The same, for callers that keep their vector: false (and `out` unspecified) when malformed.
bool ExpandHostList(std::string_view list, std::vector<std::string>* out);

// Compresses host names into Slurm's compact form. Consecutive hosts sharing a prefix and
// a numeric suffix of the same width are grouped; the input order is kept.
std::string CompactHostList(const std::vector<std::string>& hosts);

}  // namespace mt::base
