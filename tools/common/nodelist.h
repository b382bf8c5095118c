// Slurm host lists: "chi[2845-2853,2865,2875]", "node001,node002", "a[01-03],b5".
// Task i of a job with one task per node runs on host i of the expanded list.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mt::tools {

// Expands a compact host list, keeping zero padding. nullopt when malformed or when it
// would expand to more than `limit` hosts.
std::optional<std::vector<std::string>> ExpandNodelist(std::string_view list, size_t limit = 100000);

}  // namespace mt::tools
