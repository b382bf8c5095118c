// mt status JOB: the scheduler's view of a job mt submitted (squeue / scontrol / sacct for
// Slurm, the process group for local runs, kubectl for k8s), falling back to the log's
// JOB SUMMARY.
#include <iostream>

#include "launcher/launch/submit.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"

namespace mt::tools::cli {

int RunStatus(const std::vector<std::string>& args) {
  static const char* kUsage = "usage: mt status JOB [--workspace DIR] [--config FILE] [--json]";
  Flags flags(args, {"workspace", "config"}, {"json"});
  if (!flags.ok() || flags.positional().size() != 1) {
    std::cerr << "mt status: " << (flags.ok() ? "exactly one JOB is required" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  try {
    Config cfg = ResolveConfig(flags.value("config"), flags.value("workspace"));
    nlohmann::json s;
    if (const base::Status st = launch::JobStatus(cfg.workspace, flags.positional()[0], &s); !st.ok()) {
      std::cerr << "mt status: " << st.message() << "\n";
      return kExitFailed;
    }
    if (flags.has("json")) {
      std::cout << s.dump() << "\n";
    } else {
      std::cout << s["id"].get<std::string>() << " " << s["state"].get<std::string>()
                << (s["exit_code"].is_null() ? "" : " (exit " + s["exit_code"].dump() + ")") << "  [" << s["backend"].get<std::string>()
                << ", from " << s["source"].get<std::string>() << "]\n  log: " << s["log"].get<std::string>() << "\n";
    }
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "mt status: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
