// mt: the command line. `mt <command> [args]`; `mt help` lists the commands.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "launcher/launch/slurm_job_files.h"
#include "tools/logs/job_hosts.h"
#include "tools/cli/command.h"
#include "tools/logs/workspace.h"

namespace {

void Usage(std::ostream& out) {
  out << "mt — diagnose and run LLM-training jobs (MCP server and CLI)\n\nusage:\n";
  for (const auto& c : mt::tools::cli::Commands()) out << "  " << c.usage << "\n      " << c.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mt::tools::cli;
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    Usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::cout << "mt 0.1.0\n";
    return kExitOk;
  }
  // A job id no file name matches is looked up in Slurm (scontrol / sacct), when it runs here.
  mt::tools::Workspace::SetJobLocator(mt::launch::SlurmJobOutputs);
  // And where and when it ran, for placing it on a shared metrics store (query_tsdb `source`).
  mt::tools::SetScheduler([](const std::string& id) {
    mt::launch::SlurmPlacement p = mt::launch::SlurmJobPlacement(id);
    return mt::tools::SchedulerJob{std::move(p.hosts), p.start, p.end, std::move(p.source)};
  });
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : Commands()) {
    if (argv[1] == std::string(c.name)) {
      try {
        return c.run(args);
      } catch (const std::exception& e) {
        std::cerr << "mt " << c.name << ": " << e.what() << "\n";
        return kExitFailed;
      }
    }
  }
  std::cerr << "mt: unknown command '" << argv[1] << "'\n";
  Usage(std::cerr);
  return kExitUsage;
}
