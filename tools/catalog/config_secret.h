// Settings mt.yaml shares between sections: a path relative to the config's base directory,
// and a secret given by reference (`{env: NAME}`, `{file: PATH}`) or, where allowed, inline.
#pragma once
#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "tools/common/secret_ref.h"

namespace mt::tools {

// `n` as a path; a relative one is relative to `base`. Empty when `n` is absent.
std::filesystem::path PathIn(const YAML::Node& n, const std::filesystem::path& base);

// `{env: NAME}`, `{file: PATH}` or `{value: TEXT}`; a bare string is a value. Throws
// std::runtime_error naming `what` for anything else.
SecretRef SecretFrom(const YAML::Node& n, const std::filesystem::path& base, const std::string& what);

}  // namespace mt::tools
