// The C++ trace analysis against the figures of tests/traces/trace_oracle.py (an
// independent Python reader written from the same definitions) for every trace it was run
// on: the real Kineto traces of tests/traces/corpus (A100, V100, MI250; HTA's test data) and
// the real torch.profiler traces recorded by tests/traces/profile_lab.py.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/trace/chrome_trace_reader.h"
#include "tools/trace/trace_analysis.h"
#include "tools/trace/trace_json.h"

namespace fs = std::filesystem;
using mt::Json;

namespace {

const fs::path kTraces = MT_TRACES_DIR;        // tests/traces
const fs::path kCorpus = MT_TRACE_CORPUS_DIR;  // tests/traces/corpus

// The trace an expected file describes: recorded_<run>_rank<R>.pt.trace.json.gz.json →
// recorded/<run>/rank<R>.pt.trace.json.gz; <name>.json → the corpus's <name>.
fs::path TraceOf(const std::string& expected_name) {
  std::string trace = expected_name.substr(0, expected_name.size() - 5);
  if (trace.rfind("recorded_", 0) == 0) {
    std::string rest = trace.substr(9);
    size_t r = rest.rfind("_rank");
    return kTraces / "recorded" / rest.substr(0, r) / rest.substr(r + 1);
  }
  return kCorpus / trace;
}

void Compare(const Json& want, const Json& got, const std::string& path, std::vector<std::string>& diffs) {
  if (diffs.size() > 20) return;
  if (want.is_number()) {
    if (!got.is_number()) { diffs.push_back(path + ": want " + want.dump() + ", got " + got.dump()); return; }
    // The oracle rounds µs to 3 decimals and shares / GB/s to 6 (and averages rounded values).
    bool fine = path.find("share") != std::string::npos || path.find("GBps") != std::string::npos;
    double tol = fine ? 2e-6 : 2e-3;
    double w = want.get<double>(), g = got.get<double>();
    if (std::fabs(w - g) > tol + 1e-9 * std::fabs(w)) diffs.push_back(path + ": want " + want.dump() + ", got " + got.dump());
    return;
  }
  if (want.is_object()) {
    if (!got.is_object()) { diffs.push_back(path + ": want an object, got " + got.dump().substr(0, 80)); return; }
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) { diffs.push_back(path + "." + it.key() + ": missing"); continue; }
      Compare(it.value(), got[it.key()], path + "." + it.key(), diffs);
    }
    return;
  }
  if (want.is_array()) {
    if (!got.is_array() || got.size() != want.size()) {
      diffs.push_back(path + ": want " + std::to_string(want.size()) + " entries, got " + got.dump().substr(0, 200));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) Compare(want[i], got[i], path + "[" + std::to_string(i) + "]", diffs);
    return;
  }
  if (want != got) diffs.push_back(path + ": want " + want.dump() + ", got " + got.dump());
}

class OracleTest : public testing::TestWithParam<std::string> {};

TEST_P(OracleTest, SameFiguresAsTheOracle) {
  fs::path expected_file = kTraces / "expected" / GetParam();
  fs::path trace = TraceOf(GetParam());
  ASSERT_TRUE(fs::exists(trace)) << trace << " is missing";
  std::ifstream in(expected_file);
  Json want = Json::parse(in);
  auto file = mt::tools::trace::ReadChromeTrace(trace.string());
  ASSERT_TRUE(file.ok()) << file.message();
  Json got = mt::tools::trace::AnalysisJson(mt::tools::trace::AnalyseTrace(*file, trace.filename().string()));
  std::vector<std::string> diffs;
  for (const char* key : {"mode", "links", "per_step", "steady", "top_kernels", "top_kernels_source", "collectives", "checks"})
    Compare(want[key], got[key], key, diffs);
  for (const char* key : {"format", "total", "bad_x", "duplicate_steps", "training_thread"})
    if (want["events"].contains(key)) Compare(want["events"][key], got["events"][key], std::string("events.") + key, diffs);
  EXPECT_TRUE(diffs.empty()) << [&] {
    std::string s;
    for (const auto& d : diffs) s += d + "\n";
    return s;
  }();
}

std::vector<std::string> ExpectedFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kTraces / "expected")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Traces, OracleTest, testing::ValuesIn(ExpectedFiles()), [](const auto& info) {
  std::string n;
  for (char c : info.param.substr(0, info.param.size() - 13)) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
});

}  // namespace
