// Prompts: named message templates with arguments (skills are served as prompts).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::mcp {

class CallContext;

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct PromptResult {
  std::string description;
  Json messages = Json::array();   // [{role, content}]
};

using PromptHandler = std::function<PromptResult(const std::map<std::string, std::string>& args, CallContext& ctx)>;
// Completion of one argument's value given its prefix and the other arguments so far.
using ArgumentCompleter = std::function<std::vector<std::string>(
    const std::string& argument, const std::string& prefix, const std::map<std::string, std::string>& context)>;

struct Prompt {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  PromptHandler handler;
  ArgumentCompleter complete;   // optional
  Json ToJson() const;
};

}  // namespace mt::mcp
