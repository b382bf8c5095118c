// mt demo init DIR: the case-study workspace (every seed case study as a full job dir).
// mt demo [--workspace DIR]: the end-to-end demo — builds the workspace if needed, then
// asks each case study's question through a real MCP session over stdio with `mt serve`
// (exactly what an agent's client does) and prints the tools called and their answers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "base/iso_time.h"
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
  if (const base::Status st = launch::demo::InitWorkspace(dir, opts); !st.ok()) {
    std::cerr << "mt demo init: " << st.message() << "\n";
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
  const auto t = base::ParseIso8601(iso);
  return t ? base::FormatIso8601(*t + seconds) : iso;
}

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

// 3293.0 → "3,293"; digits after the point on request.
std::string Num(double v, int digits = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, std::fabs(v));
  const std::string plain = buf;
  const size_t int_len = std::min(plain.find('.'), plain.size());
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < int_len; ++i) {
    if (i > 0 && (int_len - i) % 3 == 0) out.push_back(',');
    out.push_back(plain[i]);
  }
  out.append(plain, int_len, std::string::npos);
  return out;
}

std::string Pct(double v) { return (v > 0 ? "+" : v < 0 ? "−" : "") + Num(std::fabs(v), 1) + " %"; }

std::string Clock(const std::string& iso) { return iso.size() >= 19 ? iso.substr(11, 8) : iso; }

// The demo's agent: calls tools over the MCP session, prints each call and the first lines
// of its answer, and keeps the structured results for the conclusion.
class Agent {
 public:
  Agent(mcp::StdioClient& client, std::map<std::string, std::string> last_write)
      : client_(client), last_write_(std::move(last_write)) {}

  Json Call(const std::string& tool, const Json& args, int lines = 3) {
    std::cout << "  > " << tool << " " << args.dump() << "\n";
    Json r = client_.CallTool(tool, args);
    if (r.value("isError", false)) {
      ++failures;
      std::cout << "    ERROR: " << TextOf(r) << "\n";
      return Json::object();
    }
    std::cout << FirstLines(TextOf(r), lines);
    return r.value("structuredContent", Json::object());
  }

  // triage_log as an on-call engineer asks it: a little after the job's last write.
  Json Triage(const std::string& job, long seconds_after_last_write, int lines = 3) {
    Json args = {{"job", job}};
    if (last_write_.count(job)) args["now"] = Shift(last_write_.at(job), seconds_after_last_write);
    return Call("triage_log", args, lines);
  }

  // The skill the agent follows, fetched as the MCP prompt a client would show.
  void Skill(const std::string& name, const Json& arguments) {
    Json r = client_.Request("prompts/get", {{"name", name}, {"arguments", arguments}});
    std::string text = r.value("messages", Json::array()).empty() ? "" : r["messages"][0]["content"].value("text", "");
    std::cout << "  skill " << name << " (prompts/get: " << text.size() << " characters of runbook)\n";
    if (text.empty()) ++failures;
  }

  int failures = 0;

 private:
  mcp::StdioClient& client_;
  std::map<std::string, std::string> last_write_;
};

using Conclude = std::function<std::string(Agent&)>;

struct CaseStudy {
  const char* title;
  const char* question;
  Conclude run;   // calls the tools, returns the conclusion with its numbers ("" = none)
};

const Json& At(const Json& j, const char* key) {
  static const Json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string CasePerf(Agent& a) {
  a.Skill("performance-analysis", {{"job", "8104"}});
  Json t = a.Triage("8104", 60, 1);
  Json p = a.Call("perf_analysis", {{"job", "8104"}}, 3);
  const Json& st = At(p, "steady");
  const Json& mfu = At(p, "mfu");
  if (!st.is_object() || !At(st, "tgs").is_number()) return "";
  std::string out = "8104: " + t.value("status", std::string("?")) + ", steady TGS " + Num(st["tgs"]) +
                    " tokens/s/device over steps " + std::to_string(st.value("first_step", -1)) + "–" +
                    std::to_string(st.value("last_step", -1)) + ", " + Num(st.value("step_seconds", 0.0), 2) + " s/step";
  if (At(st, "mfu_pct").is_number())
    out += ", MFU " + Num(st["mfu_pct"], 1) + " % (" + mfu.value("gpu", std::string("?")) + " " + mfu.value("dtype", std::string("?")) +
           " peak " + Num(mfu.value("peak_tflops", 0.0)) + " TFLOP/s)";
  if (At(p, "report").is_object()) out += "; report " + p["report"].value("url", std::string());
  return out;
}

std::string CaseRdma(Agent& a) {
  a.Skill("tsdb-diagnosis", {{"job", "8308"}});
  Json t = a.Triage("8308", 60, 1);
  Json q = a.Call("query_tsdb", {{"job", "8308"}, {"mode", "playbook"}, {"playbook", "network_health"}}, 1);
  Json c = a.Call("compare_jobs", {{"jobs", {"8309", "8308"}}}, 1);
  const Json& phases = At(At(t, "tgs"), "phases");
  std::vector<std::string> hosts;
  for (const auto& f : At(q, "findings").is_array() ? q["findings"] : Json::array())
    if (At(f, "evidence").is_object() && At(f["evidence"], "hosts").is_array() && f.value("verdict", std::string()).find("exclude") != std::string::npos)
      for (const auto& h : f["evidence"]["hosts"]) hosts.push_back(h.value("host", std::string()));
  if (!phases.is_array() || phases.size() < 2 || hosts.empty() || !At(At(c, "tgs"), "a").is_number()) return "";
  std::string out = "8308: TGS " + Num(phases[0].value("mean", 0.0));
  for (size_t i = 1; i < phases.size(); ++i) {
    if (phases[i].value("change_pct", 0.0) >= 0) continue;
    out += " → " + Num(phases[i].value("mean", 0.0)) + " (" + Pct(phases[i].value("change_pct", 0.0)) + ") at step " +
           std::to_string(phases[i].value("start_step", -1));
  }
  out += "; " + std::to_string(hosts.size()) + " hosts with RDMA retransmits: ";
  for (size_t i = 0; i < hosts.size(); ++i) out += (i ? ", " : "") + hosts[i];
  const double rerun = c["tgs"]["a"], degraded = phases.back().value("mean", 0.0);
  out += "; rerun 8309 without them: TGS " + Num(rerun) + " (" + Pct((rerun / degraded - 1) * 100) + " over " + Num(degraded) + ")";
  return out;
}

std::string CaseHeartbeat(Agent& a) {
  a.Skill("job-log-triage", {{"job", "8043"}});
  Json t = a.Triage("8043", 60, 2);
  const Json& hb = At(t, "heartbeat");
  if (!hb.is_object() || !hb.value("false_positive", false)) return "";
  Json q = a.Call("query_tsdb", {{"job", "8043"}, {"mode", "playbook"}, {"playbook", "heartbeat"},
                                 {"start", hb.value("heartbeat_stop_time", std::string())}, {"end", hb.value("crash_time", std::string())}}, 1);
  std::string out = "8043: heartbeat false positive at step " + std::to_string(t.value("last_step", -1)) + ": accused tasks";
  int logged = 0;
  for (const auto& acc : At(hb, "accused")) {
    out += std::string(logged > 0 ? " and " : " ") + std::to_string(acc.value("task", -1)) + " (" + acc.value("host", std::string("?")) + ")";
    logged += acc.value("logged_own_death", false) ? 1 : 0;
  }
  out += " logged their own death (" + std::to_string(logged) + " of " + std::to_string(At(hb, "accused").size()) +
         "); heartbeats stopped " + Clock(hb.value("heartbeat_stop_time", std::string())) + " = crash " +
         Clock(hb.value("crash_time", std::string())) + " − " + std::to_string(hb.value("timeout_seconds", 0)) + " s";
  double watts = 0;
  int n = 0;
  for (const auto& f : At(q, "findings").is_array() ? q["findings"] : Json::array())
    if (At(f, "evidence").is_object() && At(f["evidence"], "hosts").is_array())
      for (const auto& h : f["evidence"]["hosts"])
        if (At(h, "power_w").is_number()) watts += h["power_w"].get<double>(), ++n;
  if (n == 0) return "";
  out += "; accused hosts and neighbours drew ~" + Num(watts / n) + " W until the crash (" +
         (q.value("verdict", std::string()).rfind("Confirmed false positive", 0) == 0 ? "confirmed alive" : "not confirmed") + ")";
  return out;
}

std::string CaseRestoreLeak(Agent& a) {
  a.Skill("job-comparison", {{"job_a", "8101"}, {"job_b", "8102"}});
  Json c = a.Call("compare_jobs", {{"jobs", {"8101", "8102"}}}, 4);
  const Json& tgs = At(c, "tgs");
  const Json& metrics = At(c, "metrics");
  if (!At(tgs, "a").is_number() || !metrics.is_array() || metrics.empty()) return "";
  const Json& top = metrics[0];
  std::string out = "B vs A (8102 vs 8101): TGS " + Num(tgs["b"]) + " vs " + Num(tgs["a"]) + " (" + Pct(tgs.value("delta_pct", 0.0)) +
                    "); top difference " + top.value("metric", std::string()) + " " + Num(top.value("a", 0.0)) + " → " +
                    Num(top.value("b", 0.0)) + " per host: " + (top.value("delta", 0.0) >= 0 ? "+" : "") + Num(top.value("delta", 0.0)) +
                    (top.value("metric", std::string()) == "hw_procs_running" ? " runnable threads" : "") + " per host on " +
                    top.value("hosts_compared", std::string("?")) + " hosts";
  for (const auto& d : At(c, "log_diff").is_array() ? c["log_diff"] : Json::array()) {
    if (d.value("item", std::string()) == "checkpoint_restore_step" && At(d, "b").is_number())
      out += " after the checkpoint restore at step " + std::to_string(d["b"].get<int>());
  }
  for (const auto& d : At(c, "log_diff").is_array() ? c["log_diff"] : Json::array())
    if (d.value("item", std::string()) == "rccl_init_waves")
      out += "; RCCL init waves " + d["a"].dump() + " vs " + d["b"].dump();
  return out;
}

std::string CaseMoe(Agent& a) {
  a.Skill("tsdb-diagnosis", {{"job", "7938"}});
  Json t = a.Triage("7938", 60, 1);
  Json q = a.Call("query_tsdb", {{"job", "7938"}, {"mode", "playbook"}, {"playbook", "training_stability"}}, 1);
  std::string verdict = q.value("verdict", std::string());
  const Json& tgs = At(t, "tgs");
  if (verdict.empty() || !tgs.is_object()) return "";
  return "7938: TGS " + Pct(-tgs.value("degradation_pct", 0.0)) + " (" + tgs.value("pattern", std::string()) + ") — " + verdict;
}

std::string CaseHang(Agent& a) {
  a.Skill("job-log-triage", {{"job", "7877"}});
  Json t = a.Triage("7877", 2 * 3600, 2);
  const Json& hang = At(t, "hang");
  Json args = {{"job", "7877"}, {"mode", "playbook"}, {"playbook", "hang"}};
  Json q = a.Call("query_tsdb", args, 1);
  Json util, power;
  for (const auto& f : At(q, "findings").is_array() ? q["findings"] : Json::array()) {
    const std::string rule = f.value("rule", std::string());
    if (rule.rfind("GPU utilization", 0) == 0) util = At(f, "evidence");
    if (rule.rfind("GPU power", 0) == 0) power = At(f, "evidence");
  }
  if (t.value("class", std::string()) != "hang" || !util.is_object() || !power.is_object() || !hang.is_object()) return "";
  return "7877: collective busy-wait hang at step " + Num(t.value("last_step", 0)) + " (GPU power ~" + Num(power.value("mean", 0.0)) +
         " W, was " + Num(power.value("before_mean_w", 0.0)) + " W, at " + Num(util.value("mean", 0.0), 2) +
         " % utilisation on " + std::to_string(power.value("gpus_busy_wait", 0)) + "/" + std::to_string(power.value("n", 0)) +
         " GPUs; power fell " + Clock(power.value("power_fell_at", std::string())) + ")";
}

std::string CaseOom(Agent& a) {
  Json t = a.Triage("8105", 60, 2);
  if (t.value("class", std::string()) != "oom" || !At(t, "evidence").is_array() || t["evidence"].empty()) return "";
  std::string text = t["evidence"][0].value("text", std::string());
  size_t at = text.find("Out of memory");
  const std::string when = At(t, "last_step").is_number() ? "after step " + std::to_string(t["last_step"].get<int>())
                                                          : "before the first training step";
  return "8105: out of device memory in stage " + t.value("stage", std::string("?")) + " " + when + ": " +
         (at == std::string::npos ? text : text.substr(at)) + " (" + t["evidence"][0].value("file", std::string()) + ":" +
         std::to_string(t["evidence"][0].value("line", 0)) + ")";
}

// The seed's five case studies in the blog's order, then the two failure classes every
// on-call engineer meets first.
const CaseStudy kCases[] = {
    {"Case study 0 — performance profiling", "8104 perf analysis", CasePerf},
    {"Case study 1 — the 23 % TGS drop", "why is 8308 TGS so bad", CaseRdma},
    {"Case study 2 — heartbeat false positive", "triage 8043", CaseHeartbeat},
    {"Case study 3 — the 1 % throughput mystery", "why is job B (8102) slower than job A (8101)? identical configs", CaseRestoreLeak},
    {"Case study 4 — the MoE throughput decline", "why did the TGS of 7938 begin declining around step 450?", CaseMoe},
    {"Hang", "job 7877 stopped making progress: why?", CaseHang},
    {"Crash before training", "why did 8105 fail?", CaseOom},
};

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
  std::cout << "tools:";
  for (const auto& t : tools["tools"]) std::cout << " " << t.value("name", "");
  Json prompts = client.Request("prompts/list", Json::object());
  std::cout << "\nskills (prompts):";
  for (const auto& p : prompts.value("prompts", Json::array())) std::cout << " " << p.value("name", "");
  std::cout << "\n\n> list_jobs {}\n";
  Json jobs = client.CallTool("list_jobs", Json::object());
  std::cout << FirstLines(TextOf(jobs), 14) << "\n";
  std::map<std::string, std::string> last_write;
  if (jobs.contains("structuredContent"))
    for (const auto& j : jobs["structuredContent"].value("jobs", Json::array()))
      if (j.contains("last_write") && j["last_write"].is_string()) last_write[j.value("id", "")] = j["last_write"];

  Agent agent(client, last_write);
  std::vector<std::string> conclusions;
  int unconcluded = 0;
  for (const auto& c : kCases) {
    std::cout << c.title << "\n  Q: " << c.question << "\n";
    std::string conclusion;
    try {
      conclusion = c.run(agent);
    } catch (const std::exception& e) {
      std::cout << "  error: " << e.what() << "\n";
    }
    if (conclusion.empty()) {
      ++unconcluded;
      conclusion = std::string(c.title) + ": no conclusion (the evidence above is incomplete)";
    }
    std::cout << "  Conclusion: " << conclusion << "\n\n";
    conclusions.push_back(conclusion);
  }
  std::cout << "Conclusions (each reached from the tools' answers above):\n";
  for (const auto& c : conclusions) std::cout << "  - " << c << "\n";
  int rc = client.Stop();
  if (rc != 0) std::cerr << "mt demo: the server exited with status " << rc << "\n";
  return agent.failures == 0 && unconcluded == 0 && rc == 0 ? kExitOk : kExitFailed;
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
