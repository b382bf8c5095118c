// Slurm host lists live in base/hostlist.h (mt-job and the tools use them too); these names
// keep simulator code that spells them mt::launch::sim:: compiling.
#pragma once
#include "base/hostlist.h"

namespace mt::launch::sim {

using base::CompactHostList;
using base::ExpandHostList;

}  // namespace mt::launch::sim
