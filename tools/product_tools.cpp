#include "tools/product_tools.h"

namespace mt::tools {

void RegisterProductTools(mcp::Registry& registry, const ProductOptions& options) {
  // Each tool file exposes Register<Tool>(registry, options); list them here.
  (void)registry;
  (void)options;
}

}  // namespace mt::tools
