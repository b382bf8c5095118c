// mt log JOB: read_log from the command line.
#include <sys/stat.h>

#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/read_log_tool.h"

namespace mt::tools::cli {

int RunLog(const std::vector<std::string>& args) {
  static const char* kUsage =
      "usage: mt log JOB|LOG [--workspace DIR] [--config FILE] [--lines A:B|-N:] [--rank R] [--grep RE]\n"
      "              [--context N] [--max-lines N] [--file F] [--detail summary|full] [--json]";
  Flags flags(args, {"workspace", "config", "lines", "rank", "grep", "context", "max-lines", "file", "detail"}, {"json"});
  if (!flags.ok() || flags.positional().size() != 1) {
    std::cerr << "mt log: " << (flags.ok() ? "expected exactly one JOB or LOG" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  Json a = Json::object();
  auto number = [&](const char* flag, const char* key, int lo, int hi) {
    auto v = flags.value(flag);
    if (!v) return true;
    try {
      size_t used = 0;
      int n = std::stoi(*v, &used);
      if (used != v->size() || n < lo || n > hi) return false;
      a[key] = n;
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!number("rank", "rank", 0, 1000000) || !number("context", "context", 0, 20) || !number("max-lines", "max_lines", 1, 2000)) {
    std::cerr << "mt log: --rank, --context (0-20) and --max-lines (1-2000) take numbers\n" << kUsage << "\n";
    return kExitUsage;
  }
  if (auto v = flags.value("lines")) a["lines"] = *v;
  if (auto v = flags.value("grep")) a["grep"] = *v;
  if (auto v = flags.value("file")) a["file"] = *v;
  if (auto v = flags.value("detail")) a["detail"] = *v;
  const std::string& target = flags.positional()[0];
  try {
    struct stat st {};
    JobFiles job;
    std::optional<Workspace> ws;
    if (::stat(target.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      job = DescribeLogFile(target);
    } else {
      Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
      ws.emplace(config.workspace);
      job = ws->Resolve(target);
    }
    Json out = ReadLogStructured(job, a, ws ? &*ws : nullptr);
    if (flags.has("json")) {
      std::cout << out.dump() << "\n";
      return kExitOk;
    }
    for (const auto& l : out["lines"])
      std::cout << l["line"].get<uint64_t>() << (l["match"].get<bool>() ? ": " : "- ") << l["text"].get<std::string>() << "\n";
    if (out["truncated"].get<bool>() && out["resume"].is_string())
      std::cerr << "[truncated: continue with --lines " << out["resume"].get<std::string>() << "]\n";
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "mt log: " << e.what() << "\n" << kUsage << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mt log: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
