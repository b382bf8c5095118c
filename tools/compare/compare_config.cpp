#include "tools/compare/compare_config.h"

#include "base/workspace_files.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "tools/common/nodelist.h"

namespace mt::tools {
namespace {

constexpr const char* kUnset = "(unset)";
constexpr uint64_t kMaxArtifactFile = 1u << 20;

std::string Get(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? kUnset : it->second;
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// Replaces the job's own identity in a value so that per-job paths compare equal.
std::string Normalize(std::string v, const JobFiles& j) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (size_t p = v.find(from); p != std::string::npos; p = v.find(from, p + to.size())) v.replace(p, from.size(), to);
  };
  if (!j.dir.empty()) replace_all(j.dir.filename().string(), "<job dir>");
  replace_all(j.name, "<job name>");
  replace_all(j.id, "<job id>");
  return v;
}

// An artifact's text, or "" when it is missing, not a regular file, outside the workspace
// or larger than kMaxArtifactFile (a comparison just goes without it).
std::string ReadSmall(const Workspace& ws, const std::filesystem::path& p) {
  auto root = base::FileRoot::Make(ws.root());
  if (!root.ok()) return "";
  auto text = base::ReadSmallFile(*root, p, kMaxArtifactFile);
  return text.ok() ? *text : "";
}

std::string LastCommit(const std::string& git_summary) {
  size_t p = git_summary.find("[LAST COMMIT]\n");
  if (p == std::string::npos) return "";
  p += 14;
  return git_summary.substr(p, git_summary.find('\n', p) - p);
}

std::string Section(const std::string& text, const std::string& name) {
  size_t p = text.find("[" + name);
  if (p == std::string::npos) return "";
  p = text.find('\n', p);
  if (p == std::string::npos) return "";
  size_t e = text.find("\n[", p);
  return text.substr(p + 1, e == std::string::npos ? std::string::npos : e - p - 1);
}

// Files under <dir>/artifact/configs (one level), name → content.
std::map<std::string, std::string> ArtifactConfigs(const Workspace& ws, const JobFiles& j) {
  std::map<std::string, std::string> out;
  if (j.dir.empty()) return out;
  std::error_code ec;
  std::filesystem::path dir;
  try {
    dir = ws.Confine(j.dir / "artifact" / "configs");
  } catch (const std::exception&) {
    return out;
  }
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end && out.size() < 500; it.increment(ec))
    if (it->is_regular_file(ec)) out[it->path().filename().string()] = ReadSmall(ws, it->path());
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SplitPassthrough(std::string args) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(Unquote(args));
  std::string w;
  while (in >> w) {
    size_t eq = w.find('=');
    out.emplace_back(eq == std::string::npos ? w : w.substr(0, eq), eq == std::string::npos ? "" : w.substr(eq + 1));
  }
  return out;
}

std::vector<ConfigDifference> DiffConfigs(const Workspace& ws, const JobFiles& ja, const LogScan& a, const JobFiles& jb,
                                          const LogScan& b) {
  std::vector<ConfigDifference> out;
  auto add = [&](std::string key, std::string kind, std::string va, std::string vb) {
    if (va != vb) out.push_back({std::move(key), std::move(kind), std::move(va), std::move(vb)});
  };
  add("MODEL_NAME", "model", Get(a.header, "MODEL_NAME"), Get(b.header, "MODEL_NAME"));
  add("NNODES", "nodes", Get(a.header, "NNODES"), Get(b.header, "NNODES"));

  // Host sets: which hosts only one job ran on.
  std::string la = Get(a.header, "JOB_NODELIST"), lb = Get(b.header, "JOB_NODELIST");
  if (la != lb) {
    auto ea = ExpandNodelist(la), eb = ExpandNodelist(lb);
    if (ea && eb) {
      std::set<std::string> sa(ea->begin(), ea->end()), sb(eb->begin(), eb->end());
      std::string only_a, only_b;
      for (const auto& h : sa)
        if (!sb.count(h)) only_a += (only_a.empty() ? "" : ",") + h;
      for (const auto& h : sb)
        if (!sa.count(h)) only_b += (only_b.empty() ? "" : ",") + h;
      add("hosts only in this job", "hosts", only_a.empty() ? "-" : only_a, only_b.empty() ? "-" : only_b);
    } else {
      add("JOB_NODELIST", "hosts", la, lb);
    }
  }

  // Passthrough arguments, `_env_` variables reported as environment.
  std::map<std::string, std::string> pa, pb;
  for (auto& [k, v] : SplitPassthrough(Get(a.header, "PASSTHROUGH_ARGS"))) pa[k] = v;
  for (auto& [k, v] : SplitPassthrough(Get(b.header, "PASSTHROUGH_ARGS"))) pb[k] = v;
  std::set<std::string> keys;
  for (auto& [k, _] : pa) keys.insert(k);
  for (auto& [k, _] : pb) keys.insert(k);
  for (const auto& k : keys) {
    bool env = k.rfind("_env_", 0) == 0;
    add(env ? k.substr(5) : k, env ? "env" : "passthrough", Get(pa, k), Get(pb, k));
  }

  // MaxText config params (passthrough keys already reported above).
  static const std::set<std::string> kPerJob = {"run_name", "base_output_directory", "tensorboard_dir", "metrics_file"};
  std::set<std::string> ckeys;
  for (auto& [k, _] : a.config) ckeys.insert(k);
  for (auto& [k, _] : b.config) ckeys.insert(k);
  for (const auto& k : ckeys) {
    if (kPerJob.count(k) || keys.count(k)) continue;
    add(k, "config", Normalize(Get(a.config, k), ja), Normalize(Get(b.config, k), jb));
  }

  // Artifact snapshot: the code each job ran.
  if (!ja.dir.empty() && !jb.dir.empty()) {
    std::string ga = ReadSmall(ws, ja.dir / "artifact" / "git_summary.txt");
    std::string gb = ReadSmall(ws, jb.dir / "artifact" / "git_summary.txt");
    if (!ga.empty() && !gb.empty()) {
      add("git last commit", "artifact", LastCommit(ga), LastCommit(gb));
      std::string ca = Section(ga, "CHANGES"), cb = Section(gb, "CHANGES");
      if (ca != cb) add("git uncommitted changes", "artifact", ca.empty() ? "none" : ca.substr(0, 200), cb.empty() ? "none" : cb.substr(0, 200));
    }
    auto fa = ArtifactConfigs(ws, ja), fb = ArtifactConfigs(ws, jb);
    if (!fa.empty() && !fb.empty()) {
      std::set<std::string> names;
      for (auto& [k, _] : fa) names.insert(k);
      for (auto& [k, _] : fb) names.insert(k);
      for (const auto& n : names) {
        auto ia = fa.find(n), ib = fb.find(n);
        if (ia == fa.end() || ib == fb.end()) add("configs/" + n, "artifact", ia == fa.end() ? "absent" : "present", ib == fb.end() ? "absent" : "present");
        else if (ia->second != ib->second) add("configs/" + n, "artifact", "content differs", "content differs");
      }
    }
  }
  return out;
}

std::vector<ConfigDiffRow> ConfigDiffRows(const std::vector<ConfigDifference>& diffs) {
  std::vector<ConfigDiffRow> out;
  for (const auto& d : diffs) out.push_back(ConfigDiffRow{d.key, d.kind, d.a, d.b});
  return out;
}

}  // namespace mt::tools
