// mt log JOB: read_log from the command line.
#include <sys/stat.h>

#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/read_log_tool.h"
#include "tools/catalog/validated_input.h"

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
  if (!CopyIntegerFlag(flags, "rank", a, "rank") || !CopyIntegerFlag(flags, "context", a, "context") ||
      !CopyIntegerFlag(flags, "max-lines", a, "max_lines")) {
    std::cerr << "mt log: --rank, --context and --max-lines take whole numbers\n" << kUsage << "\n";
    return kExitUsage;
  }
  for (const char* f : {"lines", "grep", "file", "detail"}) CopyStringFlag(flags, f, a, f);
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
    a["job"] = target;
    ReadLogAnswer out = ReadLog(job, ValidatedInput<ReadLogInput>(ReadLogTool(ws ? ws->root() : "."), a), ws ? &*ws : nullptr);
    if (flags.has("json")) {
      std::cout << mcp::Encode(out).dump() << "\n";
      return kExitOk;
    }
    for (const auto& l : out.lines) std::cout << l.line << (l.match ? ": " : "- ") << l.text << "\n";
    if (out.truncated && out.resume) std::cerr << "[truncated: continue with --lines " << *out.resume << "]\n";
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
