// mt cancel JOB: scancel (Slurm), SIGTERM to the job's process group (local), kubectl delete
// (k8s). Only jobs mt submitted into this workspace can be cancelled.
#include <iostream>

#include "launcher/launch/submit.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"

namespace mt::tools::cli {

int RunCancel(const std::vector<std::string>& args) {
  static const char* kUsage = "usage: mt cancel JOB [--workspace DIR] [--config FILE] [--json]";
  Flags flags(args, {"workspace", "config"}, {"json"});
  if (!flags.ok() || flags.positional().size() != 1) {
    std::cerr << "mt cancel: " << (flags.ok() ? "exactly one JOB is required" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  try {
    Config cfg = ResolveConfig(flags.value("config"), flags.value("workspace"));
    std::string msg;
    if (const base::Status st = launch::CancelJob(cfg.workspace, flags.positional()[0], &msg); !st.ok()) {
      std::cerr << "mt cancel: " << st.message() << "\n";
      return kExitFailed;
    }
    if (flags.has("json"))
      std::cout << nlohmann::json({{"job", flags.positional()[0]}, {"cancelled", true}, {"message", msg}}).dump() << "\n";
    else
      std::cout << msg << "\n";
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "mt cancel: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
