#include "tools/tsdb/tsdb_manager.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/temp_dirs.h"
#include "base/workspace_files.h"
#include "tools/tsdb/prometheus_client.h"

namespace mt::tools {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct TsdbLease::Shared {
  std::mutex mu;
  int leases = 0;
  Clock::time_point last_used = Clock::now();
};

struct TsdbManager::Instance {
  std::shared_ptr<TsdbLease::Shared> shared = std::make_shared<TsdbLease::Shared>();
  std::string url;
  pid_t pid = 0;            // 0: a live job's own Prometheus (not ours)
  fs::path temp_dir;        // removed when stopped
  int temp_slot = -1;       // its base/temp_dirs.h registration
  TsdbLayout layout;
  bool blocks_only = false;
};

namespace {

std::string ReadTail(const fs::path& p, std::size_t max_bytes) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::size_t>(in.tellg());
  std::size_t from = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

// The most telling line of a failed Prometheus start: the last level=error line.
std::string StartFailure(const fs::path& log) {
  std::string tail = ReadTail(log, 16384);
  std::istringstream ss(tail);
  std::string line, best;
  while (std::getline(ss, line))
    if (line.find("level=error") != std::string::npos || line.find("err=") != std::string::npos) best = line;
  if (best.empty() && !tail.empty()) {
    auto nl = tail.find_last_of('\n', tail.size() >= 2 ? tail.size() - 2 : 0);
    best = nl == std::string::npos ? tail : tail.substr(nl + 1);
  }
  if (best.size() > 600) best = best.substr(0, 600) + "…";
  return best;
}

bool PortFree(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::optional<std::string> FindBinary(const std::string& name) {
  auto executable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? std::optional<std::string>(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    fs::path cand = fs::path(p.substr(start, end - start).empty() ? "." : p.substr(start, end - start)) / name;
    if (executable(cand)) return cand.string();
    start = end + 1;
  }
  return std::nullopt;
}

bool Alive(pid_t pid) {
  if (pid <= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  return r == 0;   // still running (r == pid: exited and reaped now; -1: not our child)
}

void Terminate(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {   // up to 5 s, as Prometheus closes its head cleanly in < 1 s
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || r < 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

// What a copy of `layout` would hold, checked before anything is written: confined to the
// layout's root, regular files only, chunk segments no larger than Prometheus writes, the
// total (apparent size) within the limit. Throws TsdbError kUnsafe / kTooLarge / kCorrupt.
struct CopyPlan {
  std::vector<std::pair<fs::path, std::string>> trees;   // real source dir, name in the copy
  uint64_t bytes = 0;
};

[[noreturn]] void ThrowCopyError(const base::Status& st, const std::string& what) {
  using base::Errc;
  switch (st.code()) {
    case Errc::kEscapes:
    case Errc::kLoop:
    case Errc::kNotRegular: throw TsdbError(TsdbError::Code::kUnsafe, what + ": " + st.message());
    case Errc::kTooLarge:
    case Errc::kTooMany: throw TsdbError(TsdbError::Code::kTooLarge, what + ": " + st.message());
    default: throw TsdbError(TsdbError::Code::kStartFailed, "cannot copy the TSDB blocks: " + what + ": " + st.message());
  }
}

CopyPlan PlanCopy(const TsdbLayout& layout, bool blocks_only, const TsdbManagerOptions& o) {
  auto root = base::FileRoot::Make(layout.root.empty() ? layout.dir.parent_path() : layout.root);
  if (!root.ok()) throw TsdbError(TsdbError::Code::kMissing, "cannot read " + layout.dir.string() + ": " + root.message());
  CopyPlan plan;
  for (const auto& b : layout.blocks) {
    fs::path src = b.real_dir.empty() ? layout.dir / b.ulid : b.real_dir;
    plan.trees.emplace_back(src, b.ulid);
    // Chunk segments first: the specific reason beats the total.
    auto segs = base::ListDirectory(src / "chunks", 100000);
    if (segs.ok())
      for (const auto& e : *segs)
        if (e.type == base::EntryType::kRegular && e.size > o.max_chunk_segment_bytes)
          throw TsdbError(TsdbError::Code::kCorrupt,
                          "TSDB block " + b.ulid + ": chunks/" + e.name + " is " + base::FormatBytes(e.size) +
                              " (apparent size); Prometheus cuts chunk segments at " +
                              base::FormatBytes(o.max_chunk_segment_bytes) +
                              ", so the block is corrupt or forged and is not copied");
  }
  // A finished job's wal holds the samples not yet compacted into a block; a live job's
  // wal is being written, so it is left alone (reference §4.2: copy without wal,
  // chunks_head and lock).
  if (!blocks_only && layout.has_wal) plan.trees.emplace_back((layout.real_dir.empty() ? layout.dir : layout.real_dir) / "wal", "wal");
  for (const auto& [src, name] : plan.trees) {
    base::CopyOptions co;
    co.max_total_bytes = o.max_copy_bytes - std::min(o.max_copy_bytes, plan.bytes);
    auto m = base::MeasureTree(*root, src, co);
    if (!m.ok()) {
      if (m.code() == base::Errc::kTooLarge && m.message().find("the copy limit") != std::string::npos)
        throw TsdbError(TsdbError::Code::kTooLarge,
                        "the private copy of the TSDB at " + layout.dir.string() + " would exceed " +
                            base::FormatBytes(o.max_copy_bytes) +
                            " (apparent size, sparse files counted in full); not copied (raise MT_TSDB_MAX_COPY_BYTES "
                            "to query it)");
      ThrowCopyError(m.status(), name == "wal" ? std::string("wal/") : "TSDB block " + name);
    }
    plan.bytes += m->bytes;
  }
  return plan;
}

void CopyTsdb(const TsdbLayout& layout, const CopyPlan& plan, const fs::path& to, const TsdbManagerOptions& o) {
  auto root = base::FileRoot::Make(layout.root.empty() ? layout.dir.parent_path() : layout.root);
  if (!root.ok()) throw TsdbError(TsdbError::Code::kMissing, "cannot read " + layout.dir.string() + ": " + root.message());
  if (::mkdir(to.c_str(), 0700) != 0)
    throw TsdbError(TsdbError::Code::kStartFailed, "cannot create " + to.string() + ": " + std::strerror(errno));
  uint64_t copied = 0;
  for (const auto& [src, name] : plan.trees) {
    base::CopyOptions co;
    co.max_total_bytes = o.max_copy_bytes - std::min(o.max_copy_bytes, copied);
    auto c = base::CopyTree(*root, src, to / name, co);
    if (!c.ok()) ThrowCopyError(c.status(), name == "wal" ? std::string("wal/") : "TSDB block " + name);
    copied += c->bytes;
  }
}

// "8G", "512M", "100k", "12345" → bytes; 0 when unparsable.
uint64_t ParseBytes(const char* s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s) return 0;
  uint64_t mult = 1;
  switch (*end) {
    case 'k': case 'K': mult = 1ull << 10; ++end; break;
    case 'm': case 'M': mult = 1ull << 20; ++end; break;
    case 'g': case 'G': mult = 1ull << 30; ++end; break;
    case 't': case 'T': mult = 1ull << 40; ++end; break;
    default: break;
  }
  if (*end == 'i' || *end == 'B') ++end;
  if (*end == 'B') ++end;
  if (*end != '\0') return 0;
  return static_cast<uint64_t>(v) * mult;
}

std::string Canonical(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

}  // namespace

TsdbManagerOptions TsdbManagerOptions::FromEnvironment() {
  TsdbManagerOptions o;
  if (const char* b = std::getenv("MT_PROMETHEUS"); b && *b) o.prometheus_binary = b;
  if (const char* p = std::getenv("MT_TSDB_PORTS"); p && *p) {
    int a = 0, b = 0;
    if (std::sscanf(p, "%d-%d", &a, &b) == 2 && a > 0 && b >= a && b < 65536) {
      o.port_first = a;
      o.port_last = b;
    }
  }
  if (const char* s = std::getenv("MT_TSDB_IDLE_SECONDS"); s && *s) {
    long v = std::atol(s);
    if (v > 0) o.idle_timeout = std::chrono::seconds(v);
  }
  if (const char* s = std::getenv("MT_TSDB_MAX_COPY_BYTES"); s && *s)
    if (uint64_t v = ParseBytes(s)) o.max_copy_bytes = v;
  return o;
}

TsdbLease::TsdbLease(std::shared_ptr<Shared> shared, std::string url, std::string source, TsdbLayout layout, pid_t pid,
                     bool started, std::string note)
    : shared_(std::move(shared)), url_(std::move(url)), source_(std::move(source)), layout_(std::move(layout)),
      pid_(pid), started_(started), note_(std::move(note)) {}

TsdbLease::~TsdbLease() {
  if (!shared_) return;
  std::lock_guard<std::mutex> l(shared_->mu);
  --shared_->leases;
  shared_->last_used = Clock::now();
}

namespace {

// Copies left behind by an mt that could not clean up (killed, or `mt serve` ending on a
// signal with _Exit): their `owner` file names the mt and Prometheus PIDs; when neither is
// alive, the copy is removed.
void SweepStaleCopies(const fs::path& root) {
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("mt-tsdb-", 0) != 0 || base::LinkType(it->path()) != base::EntryType::kDirectory) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;   // not ours
    // The owner file is read like any untrusted file: a FIFO planted there must not block.
    auto f = base::OpenRegularFile(nullptr, it->path() / "owner");
    if (!f.ok()) continue;
    char buf[64] = {};
    ssize_t n = ::pread(f->fd(), buf, sizeof buf - 1, 0);
    long owner = 0, child = 0;
    if (n <= 0 || std::sscanf(buf, "%ld %ld", &owner, &child) < 1 || owner <= 0) continue;   // still being set up
    auto alive = [](long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); };
    if (alive(owner) || alive(child)) continue;
    base::RemoveTreeNoFollow(it->path().c_str());
  }
}

void WriteOwner(const fs::path& dir, pid_t child) {
  // "<mt pid> <prometheus pid>": what SweepStaleCopies of a later mt checks.
  std::ofstream(dir / "owner", std::ios::trunc) << ::getpid() << " " << child << "\n";
}

}  // namespace

TsdbManager::TsdbManager(TsdbManagerOptions options) : options_(std::move(options)), next_port_(options_.port_first) {
  SweepStaleCopies(options_.temp_root.empty() ? fs::temp_directory_path() : options_.temp_root);
  reaper_ = std::thread([this] { ReapLoop(); });
}

TsdbManager::~TsdbManager() {
  ++abort_starts_;   // an instance being started gives the lock up at once
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  StopAll();
}

void TsdbManager::ReapLoop() {
  // Process-directed signals belong to the threads that expect them (mt serve sigwait()s
  // for SIGINT/SIGTERM, which only works when every thread blocks them).
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock<std::mutex> l(mu_);
  auto tick = std::min<std::chrono::milliseconds>(std::chrono::seconds(1), options_.idle_timeout / 4 + std::chrono::milliseconds(1));
  while (!stopping_) {
    cv_.wait_for(l, tick);
    if (stopping_) break;
    std::vector<fs::path> idle;
    for (auto& [key, inst] : instances_) {
      std::lock_guard<std::mutex> sl(inst->shared->mu);
      if (inst->shared->leases == 0 && Clock::now() - inst->shared->last_used > options_.idle_timeout) idle.push_back(key);
    }
    for (const auto& key : idle) StopLocked(key);
  }
}

void TsdbManager::StopLocked(const fs::path& key) {
  auto it = instances_.find(key);
  if (it == instances_.end()) return;
  Terminate(it->second->pid);
  base::SetTempDirChild(it->second->temp_slot, 0);
  if (!it->second->temp_dir.empty()) base::RemoveTreeNoFollow(it->second->temp_dir.c_str());
  base::ForgetTempDir(it->second->temp_slot);
  instances_.erase(it);
}

void TsdbManager::StopAll() {
  ++abort_starts_;
  std::lock_guard<std::mutex> l(mu_);
  struct Done {
    std::atomic<int>& n;
    ~Done() { --n; }
  } done{abort_starts_};
  std::vector<fs::path> keys;
  for (auto& [k, _] : instances_) keys.push_back(k);
  for (const auto& k : keys) StopLocked(k);
}

void TsdbManager::Discard(const fs::path& tsdb_dir) {
  std::lock_guard<std::mutex> l(mu_);
  StopLocked(Canonical(tsdb_dir));
}

std::size_t TsdbManager::running() const {
  std::lock_guard<std::mutex> l(mu_);
  return instances_.size();
}

namespace {

// A fresh private directory under the temp root (or the system's temp directory).
fs::path MakeTempDir(const TsdbManagerOptions& options) {
  fs::path root = options.temp_root.empty() ? fs::temp_directory_path() : options.temp_root;
  std::string tmpl = (root / "mt-tsdb-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw TsdbError(TsdbError::Code::kStartFailed, "cannot create a temp directory under " + root.string() + ": " + std::strerror(errno));
  return buf.data();
}

// A start that failed: its temp directory goes, and the error is thrown.
[[noreturn]] void FailStart(const fs::path& temp_dir, int temp_slot, TsdbError::Code code, const std::string& msg) {
  base::SetTempDirChild(temp_slot, 0);
  base::RemoveTreeNoFollow(temp_dir.c_str());
  base::ForgetTempDir(temp_slot);
  throw TsdbError(code, msg);
}

bool WriteServeOnlyConfig(const fs::path& config) {
  std::ofstream c(config);
  // No scrape targets: this instance only serves the copied blocks.
  c << "global:\n  scrape_interval: 999h\n  evaluation_interval: 999h\nscrape_configs: []\n";
  return static_cast<bool>(c);
}

// Forks and execs Prometheus on `data`, listening on 127.0.0.1:port, its output in `log`.
// The child's pid, or -1 with `*error` set when fork failed.
pid_t SpawnPrometheus(const std::string& binary, const fs::path& config, const fs::path& data, const fs::path& log,
                      int port, const std::string& lookback_delta, std::string* error) {
  std::vector<std::string> args = {binary,
                                    "--config.file=" + config.string(),
                                    "--storage.tsdb.path=" + data.string(),
                                    "--storage.tsdb.retention.time=100y",
                                    "--query.lookback-delta=" + lookback_delta,
                                    "--web.listen-address=127.0.0.1:" + std::to_string(port)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec. Signal mask and ignored signals
    // survive exec, and servers block SIGTERM in every thread (mcp/signals.h).
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);   // a Ctrl-C in the terminal goes to mt, which stops it cleanly
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

enum class Readiness { kReady, kExited, kTimedOut, kAborted };

// Polls the new Prometheus until it is ready, exits, the deadline passes or a stop wants in.
Readiness WaitUntilReady(pid_t pid, const std::string& url, std::chrono::milliseconds ready_timeout,
                         const std::atomic<int>& abort_starts) {
  PrometheusClient probe(url);
  auto deadline = Clock::now() + ready_timeout;
  while (Clock::now() < deadline) {
    if (abort_starts.load() > 0) return Readiness::kAborted;
    if (!Alive(pid)) return Readiness::kExited;
    if (probe.Ready()) return Readiness::kReady;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Readiness::kTimedOut;
}

}  // namespace

std::shared_ptr<TsdbManager::Instance> TsdbManager::Start(const fs::path& key, const TsdbLayout& layout, bool blocks_only) {
  auto binary = FindBinary(options_.prometheus_binary);
  if (!binary)
    throw TsdbError(TsdbError::Code::kNoBinary,
                    "prometheus binary '" + options_.prometheus_binary +
                        "' not found (install the Debian package `prometheus`, or point MT_PROMETHEUS / --prometheus at it)");
  // Everything that can refuse the copy is decided before the temp directory exists.
  const CopyPlan plan = PlanCopy(layout, blocks_only, options_);
  const fs::path temp_dir = MakeTempDir(options_);
  auto inst = std::make_shared<Instance>();
  inst->temp_dir = temp_dir;
  inst->temp_slot = base::RegisterTempDir(inst->temp_dir);
  base::InstallTempDirSignalCleanup();
  WriteOwner(inst->temp_dir, 0);
  inst->layout = layout;
  inst->blocks_only = blocks_only;
  auto fail = [&](TsdbError::Code code, const std::string& msg) { FailStart(inst->temp_dir, inst->temp_slot, code, msg); };
  const fs::path data = inst->temp_dir / "data";
  try {
    CopyTsdb(layout, plan, data, options_);
  } catch (const TsdbError& e) {
    fail(e.code(), e.what());
  } catch (const std::exception& e) {
    fail(TsdbError::Code::kStartFailed, std::string("cannot copy the TSDB blocks: ") + e.what());
  }
  const fs::path config = inst->temp_dir / "prometheus.yml";
  const fs::path log = inst->temp_dir / "prometheus.log";
  if (!WriteServeOnlyConfig(config)) fail(TsdbError::Code::kStartFailed, "cannot write " + config.string());

  const int span = options_.port_last - options_.port_first + 1;
  int tried = 0;
  for (int attempt = 0; attempt < span; ++attempt) {
    int port = options_.port_first + ((next_port_ - options_.port_first + attempt) % span);
    if (!PortFree(port)) continue;
    ++tried;
    std::string fork_error;
    const pid_t pid = SpawnPrometheus(*binary, config, data, log, port, options_.lookback_delta, &fork_error);
    if (pid < 0) fail(TsdbError::Code::kStartFailed, fork_error);
    inst->pid = pid;
    base::SetTempDirChild(inst->temp_slot, pid);
    inst->url = "http://127.0.0.1:" + std::to_string(port);
    const Readiness readiness = WaitUntilReady(pid, inst->url, options_.ready_timeout, abort_starts_);
    if (readiness == Readiness::kAborted) {
      Terminate(pid);
      fail(TsdbError::Code::kStartFailed, "stopped while starting Prometheus on the copy of " + key.string() +
                                              " (mt is shutting down)");
    }
    if (readiness == Readiness::kReady) {
      WriteOwner(inst->temp_dir, pid);
      next_port_ = port + 1 > options_.port_last ? options_.port_first : port + 1;
      return inst;
    }
    if (readiness == Readiness::kTimedOut) {
      Terminate(pid);
      base::SetTempDirChild(inst->temp_slot, 0);
      fail(TsdbError::Code::kStartFailed, "Prometheus on the copy of " + key.string() + " was not ready within " +
                                              std::to_string(options_.ready_timeout.count() / 1000) + " s: " +
                                              StartFailure(log));
    }
    base::SetTempDirChild(inst->temp_slot, 0);   // exited and reaped by Alive()
    std::string why = StartFailure(log);
    if (why.find("address already in use") != std::string::npos) continue;   // lost a race for the port
    fail(TsdbError::Code::kStartFailed,
         "Prometheus could not open the TSDB copied from " + key.string() + " (corrupt block?): " + why);
  }
  fail(TsdbError::Code::kNoPort, "no free loopback port in " + std::to_string(options_.port_first) + "-" +
                                     std::to_string(options_.port_last) + " (" + std::to_string(tried) +
                                     " tried; set MT_TSDB_PORTS=A-B)");
  return nullptr;   // unreachable
}

TsdbLease TsdbManager::Acquire(const TsdbSource& source) {
  TsdbLayout layout = ReadTsdbLayout(source.tsdb_dir);
  const fs::path key = Canonical(source.tsdb_dir);
  std::string note;

  // A live job: its own Prometheus, if it answers here and serves this very directory.
  if (source.job_running && source.live_port) {
    std::string url = "http://127.0.0.1:" + std::to_string(*source.live_port);
    PrometheusClientOptions quick;
    quick.retries = 0;
    quick.request_timeout = std::chrono::milliseconds(3000);
    try {
      Json flags = PrometheusClient(url, quick).Flags();
      std::string path = flags.value("storage.tsdb.path", "");
      if (!path.empty() && Canonical(path) == key.string()) {
        auto shared = std::make_shared<TsdbLease::Shared>();
        shared->leases = 1;
        return TsdbLease(shared, url, "live", layout, 0, false, "the job's own Prometheus on port " + std::to_string(*source.live_port));
      }
      note = "port " + std::to_string(*source.live_port) + " serves another TSDB (" + path + "); ";
    } catch (const PrometheusError&) {
      note = "the job's Prometheus (port " + std::to_string(*source.live_port) + ") does not answer here; ";
    }
  }
  const bool blocks_only = source.job_running;
  if (blocks_only) {
    if (layout.blocks.empty())
      throw TsdbError(TsdbError::Code::kLive, note + "the job is live and has no compacted block yet; query its own Prometheus on the head node");
    note += "live job: querying a private copy of its compacted blocks (the newest ~2 h may be missing)";
  }

  std::lock_guard<std::mutex> l(mu_);
  bool started = false;
  auto it = instances_.find(key);
  if (it != instances_.end()) {
    // Reuse unless it died (killed, OOM) or the job's blocks changed since the copy.
    bool same = it->second->layout.blocks.size() == layout.blocks.size() && it->second->layout.max_ms == layout.max_ms &&
                it->second->blocks_only == blocks_only;
    if (!Alive(it->second->pid) || !same) {
      if (!Alive(it->second->pid)) note += (note.empty() ? "" : "; ") + std::string("restarted Prometheus (the previous one had exited)");
      StopLocked(key);
      it = instances_.end();
    }
  }
  if (it == instances_.end()) {
    auto inst = Start(key, layout, blocks_only);
    it = instances_.emplace(key, inst).first;
    started = true;
  }
  auto& inst = it->second;
  {
    std::lock_guard<std::mutex> sl(inst->shared->mu);
    ++inst->shared->leases;
    inst->shared->last_used = Clock::now();
  }
  return TsdbLease(inst->shared, inst->url, "private copy", layout, inst->pid, started, note);
}

TsdbManager& DefaultTsdbManager() {
  static TsdbManager manager;
  return manager;
}

std::optional<int> LivePrometheusPort(const fs::path& log) {
  auto f = base::OpenRegularFile(nullptr, log);
  if (!f.ok()) return std::nullopt;
  // The line comes from rank 0 at start-up; 32 MiB covers it in logs of any length. Lines
  // are cut at 64 KiB: a 2 GB line costs 64 KiB, not 4 GB.
  base::LineLimits limits;
  limits.max_total_bytes = 32u << 20;
  base::LineReader lines(f->fd(), limits);
  std::optional<int> port;
  static const std::string kMarker = "[Prometheus] Started on port ";
  std::string_view line;
  while (lines.Next(&line)) {
    auto p = line.find(kMarker);
    if (p == std::string_view::npos) continue;
    std::string digits(line.substr(p + kMarker.size(), 6));
    int v = std::atoi(digits.c_str());
    if (v > 0 && v < 65536) port = v;
  }
  return port;
}

void RemovePrivateTsdbCopies() noexcept { base::RemoveRegisteredTempDirs(); }

}  // namespace mt::tools
