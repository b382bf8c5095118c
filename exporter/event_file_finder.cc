#include "exporter/event_file_finder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <vector>

#include "exporter/text_util.h"

namespace mt::exporter {

namespace {

constexpr std::string_view kPrefix = "events.out.tfevents.";
constexpr int kMaxDepth = 8;

// Big trees in a job dir that never hold event files.
bool Pruned(std::string_view name) {
  return name == "prometheus" || name == "ray_logs" || name == "metrics_exporter" ||
         name == ".artifacts" || name == "xla_dump" || name == "checkpoints" || name == "tracelens" ||
         name == "plugins";
}

struct Candidate {
  std::string path;
  double epoch;
  bool this_host;
  double mtime;
};

void Walk(const std::string& dir, int depth, const std::string& host, double since,
          std::vector<Candidate>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    std::string path = dir + "/" + std::string(n);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;  // no symlink following: stay in the tree
    if (S_ISDIR(st.st_mode)) {
      if (depth < kMaxDepth && !Pruned(n)) Walk(path, depth + 1, host, since, out);
      continue;
    }
    if (!S_ISREG(st.st_mode) || !n.starts_with(kPrefix)) continue;
    // TensorFlow's profiler leaves `<...>.profile-empty` event files with no scalars.
    if (n.ends_with(".profile-empty")) continue;
    auto epoch = EventFileEpoch(std::string(n));
    if (!epoch || *epoch < since) continue;
    std::string_view rest = n.substr(kPrefix.size());
    rest.remove_prefix(std::min(rest.size(), rest.find('.') + 1));  // past "<epoch>."
    bool mine = rest == host || (rest.starts_with(host) && rest.size() > host.size() && rest[host.size()] == '.');
    out.push_back({path, *epoch, mine, static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9});
  }
  ::closedir(d);
}

}  // namespace

std::optional<double> EventFileEpoch(const std::string& basename) {
  if (!std::string_view(basename).starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = std::string_view(basename).substr(kPrefix.size());
  auto v = ParseU64(rest.substr(0, rest.find('.')));
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::optional<std::string> FindNewestEventFile(const std::string& dir, const std::string& host,
                                               double since_epoch) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return dir;  // given a file
  std::vector<Candidate> found;
  Walk(dir, 0, host, since_epoch, found);
  bool any_mine = false;
  for (const auto& c : found) any_mine |= c.this_host;
  const Candidate* best = nullptr;
  for (const auto& c : found) {
    if (any_mine && !c.this_host) continue;
    if (best == nullptr || c.epoch > best->epoch || (c.epoch == best->epoch && c.mtime > best->mtime)) best = &c;
  }
  if (best == nullptr) return std::nullopt;
  return best->path;
}

}  // namespace mt::exporter
