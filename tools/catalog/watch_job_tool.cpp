#include "tools/catalog/watch_job_tool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "launcher/approval/audit.h"
#include "mcp/call_context.h"
#include "tools/catalog/job_watch.h"
#include "tools/supervise/notifier.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDescription =
    "Supervise a running job: each look reads the scheduler's state and triages the log, reports what changed "
    "(state, hang, throughput degradation, end) and, on a hang or a failure, decides restart / stop / continue with "
    "its reason. A restart of a job mt submitted is the job's own plan again from its last checkpoint, without the "
    "blamed hosts, through the approval gate: it runs when the server's policy.supervisor allows it, else it waits for "
    "a human (never for you: tell the user the plan id). With the MCP Tasks extension the watch is a task (progress per "
    "finding); otherwise it runs in the background here, action status reads its findings and a subscription to the "
    "watch's resource (mt://watches/CHAIN) is notified of each new one. action list shows every "
    "watch of the workspace; once looks one time.";

constexpr size_t kMaxBackgroundWatches = 16;
constexpr size_t kStatusFindings = 50;
constexpr const char* kWatchUriPrefix = "mt://watches/";

// The watches this server runs in the background (clients without the Tasks extension).
struct Background {
  std::atomic<bool> stop{false}, done{false};
  std::string chain, state = "watching";
  std::mutex mu;
};

std::mutex g_mu;
std::map<std::string, std::shared_ptr<Background>>& Watches() {
  static auto* watches = new std::map<std::string, std::shared_ptr<Background>>();
  return *watches;
}

JobWatchEnv EnvOf(const ProductOptions& o) {
  JobWatchEnv env{o.workspace, o.approvals, o.webhooks};
  if (env.approvals.workspace.empty()) env.approvals.workspace = o.workspace;
  return env;
}

JobWatchOptions OptionsOf(const WatchJobInput& in, const mcp::CallContext& ctx) {
  JobWatchOptions o;
  if (in.hang_seconds) o.rules.hang_seconds = *in.hang_seconds;
  if (in.startup_seconds) o.rules.startup_seconds = *in.startup_seconds;
  if (in.degrade_pct) o.rules.degrade_pct = *in.degrade_pct;
  if (in.max_restarts) o.rules.policy.max_restarts = static_cast<int>(*in.max_restarts);
  o.requester = Actor{"watch_job (" + ctx.caller().name + ")", "supervisor"};
  return o;
}

WatchFindingView ViewOf(int64_t now, const WatchFinding& f) {
  return {launch::approval::IsoUtc(now), f.kind, f.text, f.detail.is_object() ? f.detail : Json::object()};
}

// A chain's record on disk: its memory and its last findings (the outbox).
WatchView ReadChain(const fs::path& dir, bool with_findings) {
  WatchView v;
  v.chain = dir.filename().string();
  v.resource = kWatchUriPrefix + v.chain;
  v.state = "idle";
  std::ifstream in(dir / "memory.json");
  const Json m = in ? Json::parse(in, nullptr, false) : Json();
  if (m.is_object()) {
    const WatchMemory memory = WatchMemory::FromJson(m);
    v.job = memory.job.empty() ? v.chain : memory.job;
    v.restarts = memory.restarts;
    if (!memory.decision_action.empty()) v.decision = memory.decision_action;
    if (!memory.restart_plan.empty() && memory.restart_state == "pending") v.pending_plan = memory.restart_plan;
    if (memory.phase == "ended" && memory.restart_plan.empty()) v.state = "ended";
  } else {
    v.job = v.chain;
  }
  std::vector<Notice> notices;
  if (with_findings && Outbox(dir).Read(&notices).ok()) {
    const size_t from = notices.size() > kStatusFindings ? notices.size() - kStatusFindings : 0;
    for (size_t i = from; i < notices.size(); ++i)
      v.findings.push_back({launch::approval::IsoUtc(notices[i].time), notices[i].kind, notices[i].text,
                            notices[i].detail.is_object() ? notices[i].detail : Json::object()});
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (auto it = Watches().find(v.chain); it != Watches().end()) {
    std::lock_guard<std::mutex> l2(it->second->mu);
    v.state = it->second->state;
  }
  return v;
}

void Sleep(double seconds, const std::function<bool()>& stop) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < until && !stop()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// Looks until the job's watch is over, `stop` says so or the timeout passes; the state it ended in.
std::string Loop(JobWatch& watch, double interval, double timeout, const std::function<bool()>& stop,
                 const std::function<void(int64_t, const WatchFinding&)>& sink) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (watch.Look(sink)) return "ended";
    if (stop()) return "stopped";
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= timeout) return "timeout";
    Sleep(interval, stop);
    if (stop()) return "stopped";
  }
}

// `registry`: where a background watch tells subscribers of its resource about each finding.
WatchJobAnswer Watch(const ProductOptions& options, const WatchJobInput& in, mcp::CallContext& ctx,
                     const std::weak_ptr<mcp::Registry>& registry) {
  if (!in.job) throw std::invalid_argument("action watch needs a job");
  const double interval = in.interval_seconds.value_or(30), timeout = in.timeout_seconds.value_or(86400);
  auto watch = std::make_unique<JobWatch>(EnvOf(options), *in.job, OptionsOf(in, ctx));   // throws: the reason
  WatchJobAnswer a{"watch", {}, ""};
  WatchView v;
  v.chain = watch->chain();
  v.resource = kWatchUriPrefix + fs::path(watch->dir()).filename().string();
  std::vector<WatchFindingView> findings;
  auto collect = [&](int64_t now, const WatchFinding& f) {
    findings.push_back(ViewOf(now, f));
    ctx.ReportProgress(static_cast<double>(findings.size()), std::nullopt, f.kind + ": " + f.text);
  };
  if (in.once || !ctx.task_id().empty()) {
    // One look, or the whole watch in this call (a task: the client polls it).
    v.state = in.once ? (watch->Look(collect) ? "ended" : "watching")
                      : Loop(*watch, interval, timeout, [&ctx] { return ctx.cancelled(); }, collect);
    if (v.state == "stopped") v.state = "cancelled";
    const std::string chain_dir = watch->dir().string();
    v.job = watch->current_job();
    watch.reset();   // the lock goes before the answer: another watch may start at once
    WatchView disk = ReadChain(chain_dir, false);
    v.restarts = disk.restarts, v.decision = disk.decision, v.pending_plan = disk.pending_plan;
    v.findings = std::move(findings);
    a.message = in.once ? "one look; call again to look again" : "the watch " + v.state;
    a.watches.push_back(std::move(v));
    return a;
  }
  // No tasks: a background watch in this server.
  auto bg = std::make_shared<Background>();
  bg->chain = fs::path(watch->dir()).filename().string();
  {
    std::lock_guard<std::mutex> lock(g_mu);
    size_t running = 0;
    for (const auto& [k, w] : Watches()) running += !w->done;
    if (running >= kMaxBackgroundWatches)
      throw std::runtime_error("this server already runs " + std::to_string(running) + " background watches (the limit); stop one first");
    Watches()[bg->chain] = bg;
  }
  const fs::path dir = watch->dir();
  const std::string uri = kWatchUriPrefix + bg->chain;
  std::thread([bg, w = std::shared_ptr<JobWatch>(std::move(watch)), interval, timeout, registry, uri] {
    // Each finding (already in the chain's outbox, which the resource reads) and the end.
    auto tell = [&registry, &uri] {
      if (auto r = registry.lock()) r->ResourceChanged(uri);
    };
    std::string state;
    try {
      state = Loop(*w, interval, timeout, [bg] { return bg->stop.load(); }, [&tell](int64_t, const WatchFinding&) { tell(); });
    } catch (const std::exception&) {
      state = "stopped";
    }
    {
      std::lock_guard<std::mutex> l(bg->mu);
      bg->state = state;
      bg->done = true;
    }
    tell();
  }).detach();
  WatchView now = ReadChain(dir, true);
  a.message = "watching " + now.job + " in the background of this server (every " + std::to_string(static_cast<int64_t>(interval)) +
              " s); call watch_job with action status to read its findings, action stop to end it";
  a.watches.push_back(std::move(now));
  return a;
}

fs::path ChainDir(const ProductOptions& o, const std::string& job) {
  // The chain's directory is named by the job id the watch began with; a later attempt's
  // id finds its chain through each chain's memory.
  const fs::path root = o.workspace / ".mt" / "watch";
  if (job.find('/') == std::string::npos && job != "." && job != ".." && fs::is_directory(root / job)) return root / job;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (!e.is_directory()) continue;
    std::ifstream in(e.path() / "memory.json");
    const Json m = in ? Json::parse(in, nullptr, false) : Json();
    if (m.is_object() && m.value("job", "") == job) return e.path();
  }
  throw std::invalid_argument("no watch of job '" + job + "' in this workspace");
}

WatchJobAnswer Call(const ProductOptions& options, const WatchJobInput& in, mcp::CallContext& ctx,
                    const std::weak_ptr<mcp::Registry>& registry) {
  if (in.action == "watch") return Watch(options, in, ctx, registry);
  WatchJobAnswer a{in.action, {}, ""};
  if (in.action == "list") {
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(options.workspace / ".mt" / "watch", ec))
      if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) a.watches.push_back(ReadChain(d, false));
    a.message = std::to_string(a.watches.size()) + " watches";
    return a;
  }
  if (!in.job) throw std::invalid_argument("action " + in.action + " needs a job");
  const fs::path dir = ChainDir(options, *in.job);
  if (in.action == "stop") {
    std::shared_ptr<Background> bg;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      if (auto it = Watches().find(dir.filename().string()); it != Watches().end()) bg = it->second;
    }
    if (!bg || bg->done) throw std::invalid_argument("this server runs no watch of job '" + *in.job + "'");
    bg->stop = true;
    for (int i = 0; i < 100 && !bg->done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a.message = bg->done ? "stopped" : "stopping (the current look finishes first)";
  }
  a.watches.push_back(ReadChain(dir, in.action == "status"));
  if (a.message.empty()) a.message = a.watches.back().state;
  return a;
}

}  // namespace

void RegisterWatchJob(mcp::Registry& registry, const ProductOptions& options) {
  // A registry that is not owned by a shared_ptr (a test's) gets no notifications.
  const std::weak_ptr<mcp::Registry> weak = registry.weak_from_this();
  registry.AddResourceTemplate(
      {.uri_template = std::string(kWatchUriPrefix) + "{chain}",
       .name = "watch",
       .title = "A job watch's state and findings",
       .description = "What watch_job action status answers for one chain (its last 50 findings), as JSON. Subscribe "
                      "to be notified of each new finding of a watch running in this server.",
       .mime_type = "application/json",
       .read = [options](const std::string& uri, const std::map<std::string, std::string>& vars, mcp::CallContext&) {
         const std::string chain = vars.count("chain") ? vars.at("chain") : "";
         // (a template variable never spans '/'; "." and ".." are not chains either)
         if (chain.empty() || chain == "." || chain == ".." || !fs::is_directory(options.workspace / ".mt" / "watch" / chain))
           return std::vector<mcp::ResourceContents>{};   // the server answers "resource not found"
         const WatchView v = ReadChain(options.workspace / ".mt" / "watch" / chain, true);
         return std::vector<mcp::ResourceContents>{{uri, "application/json", mcp::Encode(v).dump(), std::nullopt}};
       }});
  registry.AddTool(mcp::MakeTypedTool<WatchJobInput, WatchJobAnswer>(
      {.name = "watch_job",
       .title = "Supervise a running job (restarts through the approval gate)",
       .description = kDescription,
       // Not read-only (it records findings and may ask for a restart), idempotent per job
       // (one watcher per job; asking again finds the same restart plan), an open world.
       .annotations = mcp::ToolAnnotations{false, false, true, true},
       .task_support = mcp::TaskSupport::kOptional},
      [options, weak](const WatchJobInput& in, mcp::CallContext& ctx) { return Call(options, in, ctx, weak); },
      [](const WatchJobAnswer& a) {
        std::string t = "watch_job " + a.action + ": " + a.message;
        for (const auto& w : a.watches) {
          t += "\n- " + w.chain + " (job " + w.job + "): " + w.state + ", " + std::to_string(w.restarts) + " restarts" +
               (w.pending_plan ? ", restart plan " + *w.pending_plan + " waits for mt approve" : "");
          for (const auto& f : w.findings) t += "\n  " + f.time + " " + f.kind + ": " + f.text;
        }
        return t;
      }));
}

}  // namespace mt::tools
