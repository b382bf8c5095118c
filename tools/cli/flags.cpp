#include "tools/cli/flags.h"

#include <stdexcept>

namespace mt::tools::cli {

Flags::Flags(const std::vector<std::string>& args, std::set<std::string> with_value, std::set<std::string> switches) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      passthrough_.assign(args.begin() + long(i) + 1, args.end());
      return;
    }
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    if (with_value.count(name)) {
      if (!inline_value) {
        if (i + 1 >= args.size()) {
          error_ = "--" + name + " needs a value";
          return;
        }
        value = args[++i];
      }
      values_[name].push_back(value);
    } else if (switches.count(name) && !inline_value) {
      switches_set_.insert(name);
    } else {
      error_ = "unknown option --" + name;
      return;
    }
  }
}

std::optional<std::string> Flags::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Flags::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

void CopyStringFlag(const Flags& flags, const std::string& flag, Json& args, const std::string& key) {
  if (auto v = flags.value(flag)) args[key] = *v;
}

bool CopyIntegerFlag(const Flags& flags, const std::string& flag, Json& args, const std::string& key) {
  auto v = flags.value(flag);
  if (!v) return true;
  try {
    size_t used = 0;
    long long n = std::stoll(*v, &used);
    if (used != v->size()) return false;
    args[key] = n;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace mt::tools::cli
