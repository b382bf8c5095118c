// mt reference: the tool reference (markdown) generated from the schemas mt serve publishes.
#include <iostream>

#include "tools/cli/command.h"
#include "tools/catalog/product_tools.h"
#include "tools/catalog/tool_reference.h"

namespace mt::tools::cli {

int RunReference(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "mt reference: takes no arguments\nusage: mt reference > docs/tool-reference.md\n";
    return kExitUsage;
  }
  mcp::Registry registry;
  ProductOptions options;
  options.workspace = "/nonexistent-workspace";   // registration only; nothing is read
  RegisterProductTools(registry, options);
  std::cout << ToolReferenceMarkdown(registry);
  return kExitOk;
}

}  // namespace mt::tools::cli
