// mt demo init DIR: the case-study workspace (every seed case study as a full job dir).
// mt demo [--workspace DIR]: the end-to-end demo — builds the workspace if needed, then
// asks each case study's question through a real MCP session over stdio with `mt serve`
// (exactly what an agent's client does) and prints the tools called and their answers.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "launcher/demo/workspace.h"
#include "mcp/stdio_client.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"

namespace mt::tools::cli {

namespace {

namespace fs = std::filesystem;

int Init(const fs::path& dir) {
  launch::demo::InitOptions opts;
  opts.progress = [](const std::string& line) { std::cerr << "  " << line << "\n"; };
  std::cerr << "mt demo: generating the case-study workspace in " << dir.string() << " ...\n";
  std::string err = launch::demo::InitWorkspace(dir, opts);
  if (!err.empty()) {
    std::cerr << "mt demo init: " << err << "\n";
    return kExitFailed;
  }
  return kExitOk;
}

std::string SelfPath() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "mt" : p.string();
}

// ISO-8601 UTC of `iso` shifted by `seconds` (the demo asks each question shortly after
// the job's last write, as a person on call would).
std::string Shift(const std::string& iso, long seconds) {
  std::tm tm{};
  std::istringstream in(iso);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return iso;
  time_t t = timegm(&tm) + seconds;
  std::tm out{};
  gmtime_r(&t, &out);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &out);
  return buf;
}

struct Question {
  const char* job;
  const char* text;
  long seconds_after_last_write;
};

// The seed's case studies, in the order the blog tells them.
const Question kQuestions[] = {
    {"8104", "Is the llama3.1-405b FP8 run healthy, and how fast is it?", 60},
    {"7877", "Job 7877 stopped making progress. Why?", 2 * 3600},
    {"8308", "Why is 8308 slower than the same config usually is?", 60},
    {"8309", "Is the rerun without the suspect nodes healthy?", 60},
    {"8043", "Why did 8043 die at step 71?", 60},
    {"8101", "Job A (fresh start): how did it run?", 60},
    {"8102", "Job B (checkpoint restore): how did it run?", 60},
    {"7938", "Why does 7938's throughput decline in the second half?", 60},
    {"8105", "Why did 8105 fail before training?", 60},
};

std::string FirstLines(const std::string& text, int n) {
  std::istringstream in(text);
  std::string out, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += "    " + line + "\n";
  return out;
}

std::string TextOf(const Json& result) {
  std::string text;
  for (const auto& c : result.value("content", Json::array()))
    if (c.value("type", "") == "text") text += c.value("text", "");
  return text;
}

int Run(const fs::path& workspace) {
  if (!fs::exists(workspace)) {
    if (int rc = Init(workspace); rc != kExitOk) return rc;
  }
  mcp::StdioClient client;
  std::string err = client.Start({SelfPath(), "serve", "--workspace", fs::absolute(workspace).string()}, "mt-demo");
  if (!err.empty()) {
    std::cerr << "mt demo: " << err << "\n";
    return kExitFailed;
  }
  std::cout << "MCP session over stdio with " << client.server_info().value("name", "?") << " "
            << client.server_info().value("version", "?") << "\n";
  Json tools = client.Request("tools/list", Json::object());
  std::set<std::string> read_only;   // tools the demo may follow up with on its own
  std::cout << "tools:";
  for (const auto& t : tools["tools"]) {
    std::cout << " " << t.value("name", "");
    if (t.contains("annotations") && t["annotations"].value("readOnlyHint", false)) read_only.insert(t["name"]);
  }
  std::cout << "\n\n> list_jobs {}\n";
  Json jobs = client.CallTool("list_jobs", Json::object());
  std::cout << FirstLines(TextOf(jobs), 14) << "\n";
  std::map<std::string, std::string> last_write;
  if (jobs.contains("structuredContent"))
    for (const auto& j : jobs["structuredContent"].value("jobs", Json::array()))
      if (j.contains("last_write") && j["last_write"].is_string()) last_write[j.value("id", "")] = j["last_write"];

  int failures = 0;
  for (const auto& q : kQuestions) {
    Json args = {{"job", q.job}};
    if (last_write.count(q.job)) args["now"] = Shift(last_write[q.job], q.seconds_after_last_write);
    std::cout << "Q: " << q.text << "\n> triage_log " << args.dump() << "\n";
    Json r = client.CallTool("triage_log", args);
    if (r.value("isError", false)) ++failures;
    std::cout << FirstLines(TextOf(r), 3);
    // Follow triage's first suggested next step when it is a read-only tool other than
    // reading the log, as an agent would (e.g. query_tsdb's hang playbook for 7877).
    for (const auto& step : r.value("structuredContent", Json::object()).value("next_steps", Json::array())) {
      std::string tool = step.value("tool", "");
      if (!read_only.count(tool) || tool == "read_log" || tool == "triage_log") continue;
      Json follow = client.CallTool(tool, step.value("arguments", Json::object()));
      if (follow.value("isError", false)) ++failures;
      std::cout << "> " << tool << " " << step.value("arguments", Json::object()).dump() << "\n"
                << FirstLines(TextOf(follow), 4);
      break;
    }
    std::cout << "\n";
  }
  int rc = client.Stop();
  if (rc != 0) std::cerr << "mt demo: the server exited with status " << rc << "\n";
  return failures == 0 && rc == 0 ? kExitOk : kExitFailed;
}

}  // namespace

int RunDemo(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace"}, {});
  if (!flags.ok()) {
    std::cerr << "mt demo: " << flags.error() << "\nusage: mt demo init DIR | mt demo [--workspace DIR]\n";
    return kExitUsage;
  }
  const auto& pos = flags.positional();
  if (!pos.empty() && pos[0] == "init") {
    if (pos.size() != 2) {
      std::cerr << "usage: mt demo init DIR\n";
      return kExitUsage;
    }
    return Init(pos[1]);
  }
  if (!pos.empty()) {
    std::cerr << "mt demo: unexpected argument " << pos[0] << "\nusage: mt demo init DIR | mt demo [--workspace DIR]\n";
    return kExitUsage;
  }
  return Run(flags.value("workspace").value_or("demo-ws"));
}

}  // namespace mt::tools::cli
