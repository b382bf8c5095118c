// truth.json and the job directories of a generated case. The job is generated as usual but
// with its OpenMetrics kept and no TSDB; the overlay rewrites the OpenMetrics files in time
// order, then promtool builds the blocks from them as it does for every simulated job.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "launcher/sim/fuzz_truth.h"
#include "launcher/sim/job_writer.h"
#include "launcher/sim/scenario_fuzz.h"

namespace mt::launch::sim {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
namespace {

std::string Quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

std::string List(const std::vector<std::string>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + Quote(v[i]);
  return o + "]";
}

std::string Number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status ApplyOverlay(const FuzzJob& j, const fs::path& om_dir) {
  std::vector<std::pair<double, fs::path>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(om_dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("window-", 0) == 0 && n.size() > 10) files.emplace_back(std::atof(n.c_str() + 7), e.path());
  }
  std::sort(files.begin(), files.end());
  Overlay overlay(j.scenario.seed, j.effects);
  for (const auto& [w, p] : files) {
    (void)w;
    if (overlay.empty()) break;
    if (Status e = base::WriteFileAtomic(p, overlay.Apply(ReadAll(p))); !e.ok()) return e;
  }
  return Status::Ok();
}

}  // namespace

std::string TruthJson(const FuzzTruth& t, const FuzzCase& c) {
  (void)c;
  std::string o = "{\n";
  o += "  \"seed\": " + std::to_string(t.seed) + ",\n  \"kind\": " + Quote(t.kind) + ",\n";
  o += "  \"family\": " + Quote(t.family) + ",\n  \"jobs\": " + List(t.jobs) + ",\n";
  o += "  \"hosts\": " + std::to_string(t.hosts.size()) + ",\n  \"naming\": " + Quote(t.naming) + ",\n";
  o += "  \"culprits\": " + List(t.culprits) + ",\n  \"uniform\": " + (t.uniform ? "true" : "false") + ",\n";
  o += "  \"onset_step\": " + std::to_string(t.onset_step) + ",\n  \"end_step\": " + std::to_string(t.end_step) + ",\n";
  o += "  \"onset_time\": " + (t.onset_time > 0 ? Quote(FormatIsoTime(t.onset_time)) : std::string("null")) + ",\n";
  o += "  \"magnitude\": {";
  size_t i = 0;
  for (const auto& [k, v] : t.magnitude) o += (i++ ? ", " : "") + Quote(k) + ": " + Number(v);
  o += "},\n  \"phases\": [";
  for (size_t p = 0; p < t.phases.size(); ++p)
    o += (p ? ", " : "") + std::string("{\"hosts\": ") + List(t.phases[p].hosts) + ", \"steps\": [" +
         std::to_string(t.phases[p].from_step) + ", " + std::to_string(t.phases[p].to_step) + "]}";
  o += "],\n  \"decoys\": [";
  for (size_t d = 0; d < t.decoys.size(); ++d)
    o += (d ? ", " : "") + std::string("{\"kind\": ") + Quote(t.decoys[d].kind) + ", \"host\": " + Quote(t.decoys[d].host) +
         ", \"detail\": " + Quote(t.decoys[d].detail) + "}";
  o += "]";
  if (t.kind == "pair") o += ",\n  \"pair\": " + Quote(t.pair) + ",\n  \"different\": " + (t.different ? "true" : "false");
  return o + "\n}\n";
}

Status WriteFuzzCase(const FuzzCase& c, const fs::path& out, const PromtoolOptions& promtool) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Status(Errc::kIo, "cannot create " + out.string() + ": " + ec.message());
  for (const FuzzJob& j : c.jobs) {
    GenerateOptions opts;
    opts.with_tsdb = false;
    opts.keep_openmetrics = true;
    opts.promtool = promtool;
    GenerateResult r;
    if (Status e = GenerateJob(j.scenario, out, opts, &r); !e.ok()) return e;
    const fs::path om = r.job_dir / "prometheus-openmetrics";
    if (Status e = ApplyOverlay(j, om); !e.ok()) return e;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(om, ec))
      if (e.path().extension() == ".om") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    PromtoolOptions p = promtool;
    p.remove_inputs = true;
    if (Status e = CreateBlocks(files, r.job_dir / "prometheus", p); !e.ok()) return e;
    fs::remove_all(om, ec);
  }
  return base::WriteFileAtomic(out / "truth.json", c.truth_json);
}

}  // namespace mt::launch::sim
