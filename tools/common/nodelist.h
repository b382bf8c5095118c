// Slurm host lists live in base/hostlist.h (mt-job and the simulator need them too). This
// name keeps the tools/ subsystems that call mt::tools::ExpandNodelist compiling; new code
// includes base/hostlist.h.
#pragma once
#include "base/hostlist.h"

namespace mt::tools {

inline std::optional<std::vector<std::string>> ExpandNodelist(std::string_view list, size_t limit = 100000) {
  return base::ExpandHostList(list, limit);
}

}  // namespace mt::tools
