// The scenario files of configs/scenarios/, compiled into the binary (see CMakeLists.txt).
#pragma once

#include <string>
#include <vector>

namespace mt::launch::demo {

struct EmbeddedScenario {
  const char* file_name;  // e.g. "7877-rccl-hang.yaml"
  const char* yaml;
};

// In file-name order.
const std::vector<EmbeddedScenario>& EmbeddedScenarios();

}  // namespace mt::launch::demo
