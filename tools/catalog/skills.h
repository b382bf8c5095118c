// Skills: the markdown runbooks under skills/<name>/SKILL.md, parsed from their YAML front
// matter, and served over MCP as prompts (prompts/get with arguments such as `job`) and as
// resources (skill://<name>), so a client without file access still gets them.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/json.h"
#include "mcp/registry.h"

namespace mt::tools {

struct SkillArgument {
  std::string name;          // lower_snake_case; `<name>` in the body is its placeholder
  std::string description;
  bool required = false;
};

struct Skill {
  std::string name;          // == its folder name
  std::string description;   // when to use it (trigger phrases)
  std::vector<SkillArgument> arguments;
  std::string body;          // the markdown after the front matter
  std::string text;          // the whole file, as served by skill://<name>
  std::string path;          // "job-log-triage/SKILL.md"
};

// Parses one SKILL.md. Throws std::runtime_error starting with `path` and naming the problem
// (no front matter, a missing or malformed key, a name that differs from its folder).
Skill ParseSkill(std::string_view text, const std::string& path);

// The skills compiled into this binary, parsed once, sorted by name. A file that does not
// parse is left out (a documentation slip must not take the server down) and its error is
// in BuiltinSkillErrors(), which the tests require to be empty.
const std::vector<Skill>& BuiltinSkills();
const std::vector<std::string>& BuiltinSkillErrors();

// The prompt text: a header naming the skill and the arguments, then the body with every
// `<argument>` placeholder replaced by its value. Throws mcp::RpcError(kInvalidParams) for an
// unknown argument or a value that is too long or holds control characters.
std::string RenderSkill(const Skill& skill, const std::map<std::string, std::string>& args);

// A tool call written in a skill as inline code: `tool_name {json arguments}`.
struct SkillToolCall {
  std::string tool;
  Json arguments;
  int line = 0;            // 1-based line in SKILL.md
  std::string error;       // set when the JSON does not parse
};
std::vector<SkillToolCall> ExtractToolCalls(const Skill& skill);

// Adds one prompt and one skill:// resource per skill. Arguments named job, job_a, job_b …
// complete from the job ids in `workspace`.
void RegisterSkills(mcp::Registry& registry, const std::vector<Skill>& skills,
                    const std::filesystem::path& workspace);

}  // namespace mt::tools
