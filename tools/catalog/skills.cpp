#include "tools/catalog/skills.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <set>
#include <stdexcept>

#include "mcp/json_rpc.h"
#include "tools/catalog/skill_files.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

namespace {

constexpr size_t kMaxDescription = 1024;   // what agent skill loaders accept
constexpr size_t kMaxArgumentValue = 200;

bool IsSkillName(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

bool IsArgumentName(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

std::string ScalarOf(const YAML::Node& node, const std::string& key, const std::string& where) {
  YAML::Node v = node[key];
  if (!v) throw std::runtime_error(where + ": front matter has no '" + key + "'");
  if (!v.IsScalar()) throw std::runtime_error(where + ": front matter '" + key + "' must be a string");
  return v.as<std::string>();
}

// A job-id argument: its values complete from the workspace.
bool IsJobArgument(const std::string& name) { return name == "job" || name.rfind("job_", 0) == 0; }

}  // namespace

Skill ParseSkill(std::string_view text, const std::string& path) {
  Skill skill;
  skill.path = path;
  skill.text = std::string(text);
  // Front matter: the file starts with a line "---" and the matter ends at the next "---" line.
  if (text.substr(0, 4) != "---\n") throw std::runtime_error(path + ": must start with a '---' front-matter line");
  size_t end = text.find("\n---\n", 3);
  if (end == std::string_view::npos) throw std::runtime_error(path + ": front matter is not closed by a '---' line");
  std::string matter(text.substr(4, end - 3));
  skill.body = std::string(text.substr(end + 5));

  YAML::Node node;
  try {
    node = YAML::Load(matter);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": front matter is not valid YAML: " + e.msg + " (line " +
                             std::to_string(e.mark.line + 2) + ")");
  }
  if (!node.IsMap()) throw std::runtime_error(path + ": front matter must be a YAML mapping");
  skill.name = ScalarOf(node, "name", path);
  skill.description = ScalarOf(node, "description", path);
  if (!IsSkillName(skill.name))
    throw std::runtime_error(path + ": name '" + skill.name + "' must be 1-64 characters of a-z, 0-9 and '-'");
  std::string folder = path.substr(0, path.find('/'));
  if (path.find('/') != std::string::npos && folder != skill.name)
    throw std::runtime_error(path + ": name '" + skill.name + "' differs from its folder '" + folder + "'");
  if (skill.description.empty() || skill.description.size() > kMaxDescription)
    throw std::runtime_error(path + ": description must be 1-" + std::to_string(kMaxDescription) + " characters");

  if (YAML::Node args = node["arguments"]) {
    if (!args.IsSequence()) throw std::runtime_error(path + ": 'arguments' must be a list");
    std::set<std::string> seen;
    for (const auto& a : args) {
      if (!a.IsMap()) throw std::runtime_error(path + ": each argument must be a mapping {name, description, required}");
      SkillArgument arg;
      arg.name = ScalarOf(a, "name", path);
      if (!IsArgumentName(arg.name))
        throw std::runtime_error(path + ": argument name '" + arg.name + "' must be lower_snake_case");
      if (!seen.insert(arg.name).second) throw std::runtime_error(path + ": argument '" + arg.name + "' appears twice");
      if (a["description"]) arg.description = a["description"].as<std::string>();
      if (YAML::Node r = a["required"]) {
        try {
          arg.required = r.as<bool>();
        } catch (const YAML::Exception&) {
          throw std::runtime_error(path + ": argument '" + arg.name + "': required must be true or false");
        }
      }
      skill.arguments.push_back(std::move(arg));
    }
  }
  return skill;
}

namespace {

struct Builtin {
  std::vector<Skill> skills;
  std::vector<std::string> errors;
};

const Builtin& LoadBuiltin() {
  static const Builtin builtin = [] {
    Builtin b;
    for (const auto& f : EmbeddedSkillFiles()) {
      try {
        b.skills.push_back(ParseSkill(f.text, std::string(f.path)));
      } catch (const std::exception& e) {
        b.errors.push_back(e.what());
      }
    }
    std::sort(b.skills.begin(), b.skills.end(), [](const Skill& x, const Skill& y) { return x.name < y.name; });
    return b;
  }();
  return builtin;
}

}  // namespace

const std::vector<Skill>& BuiltinSkills() { return LoadBuiltin().skills; }
const std::vector<std::string>& BuiltinSkillErrors() { return LoadBuiltin().errors; }

std::string RenderSkill(const Skill& skill, const std::map<std::string, std::string>& args) {
  std::string header = "Follow the mt skill \"" + skill.name + "\" below (also readable as skill://" + skill.name + ").";
  std::string body = skill.body;
  for (const auto& [name, value] : args) {
    auto it = std::find_if(skill.arguments.begin(), skill.arguments.end(), [&](const SkillArgument& a) { return a.name == name; });
    if (it == skill.arguments.end())
      throw mcp::RpcError(mcp::kInvalidParams, "skill " + skill.name + " has no argument '" + name + "'",
                          Json{{"argument", name}});
    if (value.size() > kMaxArgumentValue)
      throw mcp::RpcError(mcp::kInvalidParams, "argument '" + name + "' is longer than " +
                                                   std::to_string(kMaxArgumentValue) + " characters");
    if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
      throw mcp::RpcError(mcp::kInvalidParams, "argument '" + name + "' must not contain control characters");
    header += "\n" + name + " = " + value;
    const std::string placeholder = "<" + name + ">";
    for (size_t pos = body.find(placeholder); pos != std::string::npos; pos = body.find(placeholder, pos + value.size()))
      body.replace(pos, placeholder.size(), value);
  }
  return header + "\n\n" + body;
}

std::vector<SkillToolCall> ExtractToolCalls(const Skill& skill) {
  // Inline code spans of the form `name {…}`; a span never crosses a line in these files.
  static const std::regex span(R"(`([a-z][a-z0-9_]*) (\{[^`]*\})`)");
  std::vector<SkillToolCall> calls;
  int front_lines = static_cast<int>(std::count(skill.text.begin(), skill.text.end() - skill.body.size(), '\n'));
  int line = front_lines;
  size_t start = 0;
  while (start <= skill.body.size()) {
    size_t nl = skill.body.find('\n', start);
    std::string text = skill.body.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    ++line;
    for (std::sregex_iterator it(text.begin(), text.end(), span), end; it != end; ++it) {
      SkillToolCall call;
      call.tool = (*it)[1];
      call.line = line;
      try {
        call.arguments = Json::parse((*it)[2].str());
        if (!call.arguments.is_object()) call.error = "arguments are not a JSON object";
      } catch (const std::exception& e) {
        call.error = std::string("arguments are not valid JSON: ") + e.what();
      }
      calls.push_back(std::move(call));
    }
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return calls;
}

void RegisterSkills(mcp::Registry& registry, const std::vector<Skill>& skills, const std::filesystem::path& workspace) {
  for (const Skill& skill : skills) {
    mcp::Prompt prompt;
    prompt.name = skill.name;
    prompt.title = "Skill: " + skill.name;
    prompt.description = skill.description;
    for (const auto& a : skill.arguments) prompt.arguments.push_back({a.name, a.description, a.required});
    prompt.handler = [skill](const std::map<std::string, std::string>& args, mcp::CallContext&) {
      mcp::PromptResult r;
      r.description = skill.description;
      r.messages = Json::array(
          {{{"role", "user"}, {"content", {{"type", "text"}, {"text", RenderSkill(skill, args)}}}}});
      return r;
    };
    prompt.complete = [workspace](const std::string& argument, const std::string& prefix,
                                  const std::map<std::string, std::string>&) {
      std::vector<std::string> values;
      if (!IsJobArgument(argument)) return values;
      try {
        std::set<std::string> ids;
        for (const auto& job : Workspace(workspace).List())
          if (!job.id.empty() && job.id.rfind(prefix, 0) == 0) ids.insert(job.id);
        values.assign(ids.begin(), ids.end());
      } catch (const WorkspaceError&) {
        // no workspace: nothing to offer
      }
      return values;
    };
    registry.AddPrompt(std::move(prompt));

    mcp::Resource resource;
    resource.uri = "skill://" + skill.name;
    resource.name = skill.name;
    resource.title = "Skill: " + skill.name;
    resource.description = skill.description;
    resource.mime_type = "text/markdown";
    resource.read = [skill](const std::string& uri, mcp::CallContext&) {
      return std::vector<mcp::ResourceContents>{{uri, "text/markdown", skill.text, std::nullopt}};
    };
    registry.AddResource(std::move(resource));
  }
}

}  // namespace mt::tools
