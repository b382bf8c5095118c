// The xplane reader on XSpace bytes written by the simulator's encoder
// (launcher/sim/xplane_writer.h): times, steps, launches, memcpy and collectives as the
// analyses need them, figures checked by hand; and every kind of broken protobuf refused
// with a byte offset, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "launcher/sim/xplane_writer.h"
#include "tools/trace/trace_analysis.h"
#include "tools/trace/xplane_reader.h"

namespace fs = std::filesystem;
namespace tr = mt::tools::trace;
namespace sim = mt::launch::sim;
using mt::base::Errc;

namespace {

class XPlaneReaderTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mt-xplane-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& bytes) {
    fs::path p = dir_ / "host.xplane.pb";
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  fs::path dir_;
};

constexpr int64_t kPsPerUs = 1'000'000;

sim::XEventSpec Kernel(const std::string& name, int64_t at_us, int64_t dur_us, uint64_t corr, const std::string& hlo_op = "fusion.1") {
  return {name, at_us * kPsPerUs, dur_us * kPsPerUs, {{"correlation_id", corr}, {"hlo_op", hlo_op}}};
}

// Host: steps 7 [0, 1000] and 8 [1000, 2000] µs, launches at 10 and 1010 µs. GPU 0 and 1:
// in step 7 a GEMM 100–400 µs and an all-reduce 300–600 µs (100 µs of it under the GEMM), a
// memcpy 50–80 µs; in step 8 a GEMM 1100–1300. GPU 1's line starts 1 µs (1000 ns) later.
std::string SmallSpace() {
  sim::XPlaneSpec host{0, "/host:CPU", {}, {}};
  host.lines.push_back({3000, "Host Threads/3000", 5'000, {
      {"train", 0, 1000 * kPsPerUs, {{"step_num", int64_t{7}}}},
      {"train", 1000 * kPsPerUs, 1000 * kPsPerUs, {{"step_num", int64_t{8}}}}}});
  host.lines.push_back({3001, "Host Threads/3001", 5'000, {
      {"hipGraphLaunch", 10 * kPsPerUs, 2 * kPsPerUs, {{"correlation_id", uint64_t{11}}}},
      {"hipGraphLaunch", 1010 * kPsPerUs, 2 * kPsPerUs, {{"correlation_id", uint64_t{12}}}},
      {"hipGraphLaunch", 11 * kPsPerUs, 2 * kPsPerUs, {{"correlation_id", uint64_t{21}}}},
      {"hipGraphLaunch", 1011 * kPsPerUs, 2 * kPsPerUs, {{"correlation_id", uint64_t{22}}}}}});
  std::vector<sim::XPlaneSpec> planes{host};
  for (int g = 0; g < 2; ++g) {
    int64_t shift_ns = g * 1000;   // the line starts later; offsets are relative to it
    int64_t back = g;              // µs to subtract from offsets so absolute times agree
    uint64_t c1 = g == 0 ? 11 : 21, c2 = g == 0 ? 12 : 22;
    sim::XPlaneSpec d{g, "/device:GPU:" + std::to_string(g), {}, {{"device_vendor", std::string("AMD")}}};
    d.lines.push_back({1, "Stream #1", 5'000 + shift_ns,
                       {Kernel("Cijk_gemm", 100 - back, 300, c1), Kernel("Cijk_gemm", 1100 - back, 200, c2)}});
    d.lines.push_back({2, "Stream #2", 5'000 + shift_ns,
                       {Kernel("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", 300 - back, 300, c1, "all-reduce-start.3"),
                        Kernel("MemcpyH2D", 50 - back, 30, c1, "")}});
    d.lines.push_back({0xdeadbeef, "XLA Ops", 5'000, {Kernel("fusion.1", 0, 5000, 0)}});   // a derived view: skipped
    planes.push_back(d);
  }
  return sim::EncodeXSpace(planes, {"chi2864"});
}

TEST_F(XPlaneReaderTest, DevicePlanesBecomeTraces) {
  auto x = tr::ReadXPlane(Write(SmallSpace()));
  ASSERT_TRUE(x.ok()) << x.message();
  ASSERT_EQ(x->devices.size(), 2u);
  EXPECT_EQ(x->hostnames, std::vector<std::string>{"chi2864"});
  EXPECT_EQ(x->planes.size(), 3u);
  for (const tr::XPlaneDevice& d : x->devices) {
    const tr::TraceFile& t = d.trace;
    // 4 device events + this GPU's own 2 launches + 2 steps; the derived line is not read.
    EXPECT_EQ(t.events.size(), 8u) << d.plane;
    int kernels = 0, copies = 0;
    for (const tr::TraceEvent& e : t.events) {
      const std::string& cat = t.strings[e.cat];
      if (cat == "kernel") ++kernels;
      if (cat == "gpu_memcpy") {
        ++copies;
        EXPECT_DOUBLE_EQ(e.ts, 50.0) << d.plane;   // the same instant on both GPUs
        EXPECT_DOUBLE_EQ(e.dur, 30.0);
      }
    }
    EXPECT_EQ(kernels, 3);
    EXPECT_EQ(copies, 1);
  }
}

TEST_F(XPlaneReaderTest, DecompositionOfTheSmallSpace) {
  auto x = tr::ReadXPlane(Write(SmallSpace()));
  ASSERT_TRUE(x.ok()) << x.message();
  tr::TraceAnalysis a = tr::AnalyseTrace(x->devices[1].trace, "host.xplane.pb:/device:GPU:1");
  EXPECT_EQ(a.format, "xplane");
  EXPECT_EQ(a.mode, "gpu");
  ASSERT_EQ(a.per_step.size(), 2u);
  EXPECT_EQ(a.per_step[0].name, "ProfilerStep#7");
  ASSERT_TRUE(a.links.has_value());
  EXPECT_EQ(a.links->method, "launch_in_cpu_span");
  EXPECT_EQ(a.links->by_correlation, 4);
  const tr::StepFigures& s = a.per_step[0];
  // Window 50 → 600; compute 100–400 (300); comm 300–600 (300), exposed 400–600 (200);
  // memcpy 50–80 not under a kernel (30); idle 550 − (30 + 500) = 20.
  EXPECT_DOUBLE_EQ(s.step_time_us, 550);
  EXPECT_DOUBLE_EQ(s.compute_us, 300);
  EXPECT_DOUBLE_EQ(s.comm_us, 300);
  EXPECT_DOUBLE_EQ(s.exposed_comm_us, 200);
  EXPECT_DOUBLE_EQ(s.memcpy_memset_exposed_us, 30);
  EXPECT_DOUBLE_EQ(s.idle_us, 20);
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].kind, "AllReduce");   // from hlo_op: RCCL's name says no kind
}

// A profile processed by xprof (or with no host step marks): the steps come from the device's
// "XLA Modules" line, the module that takes the most time.
TEST_F(XPlaneReaderTest, WithoutHostStepsTheBusiestModuleMarksTheSteps) {
  sim::XPlaneSpec d{0, "/device:GPU:0", {}, {}};
  d.lines.push_back({7, "XLA Modules", 0,
                     {{"jit_train_step(42)", 0, 900 * kPsPerUs, {}},
                      {"jit_eval(9)", 950 * kPsPerUs, 20 * kPsPerUs, {}},
                      {"jit_train_step(42)", 1000 * kPsPerUs, 900 * kPsPerUs, {}},
                      {"jit_train_step(42)", 2000 * kPsPerUs, 900 * kPsPerUs, {}}}});
  d.lines.push_back({1, "Stream #1", 0,
                     {Kernel("gemm", 100, 500, 1), Kernel("gemm", 1100, 500, 2), Kernel("gemm", 2100, 600, 3)}});
  auto x = tr::ReadXPlane(Write(sim::EncodeXSpace({d}, {})));
  ASSERT_TRUE(x.ok()) << x.message();
  tr::TraceAnalysis a = tr::AnalyseTrace(x->devices[0].trace, "p.xplane.pb");
  ASSERT_EQ(a.per_step.size(), 3u);
  EXPECT_EQ(a.per_step[0].name, "ProfilerStep#0");
  EXPECT_EQ(a.per_step[2].name, "ProfilerStep#2");
  EXPECT_DOUBLE_EQ(a.per_step[2].compute_us, 600);
  EXPECT_EQ(a.links->method, "ts_in_cpu_span");   // no launches: each kernel by its own start
}

TEST_F(XPlaneReaderTest, BrokenProtobufIsRefusedWithAnOffset) {
  std::string good = SmallSpace();
  struct Case {
    std::string name, bytes, says;
  };
  std::vector<Case> cases = {
      {"empty", "", "empty"},
      {"cut", good.substr(0, good.size() * 2 / 3), "runs past the end"},
      {"json", R"({"traceEvents": []})", "wire type"},
      {"group wire type", std::string("\x0b\x0c", 2), "wire type 3"},
      {"endless varint", std::string("\x08") + std::string(12, '\xff'), "varint"},
      {"length past end", std::string("\x0a\xff\xff\x03", 4) + "abc", "runs past the end"},
      {"field zero", std::string("\x00\x01", 2), "field number 0"},
      {"no planes", std::string("\x22\x03" "abc", 5), "no XPlane"},
  };
  for (const Case& c : cases) {
    auto x = tr::ReadXPlane(Write(c.bytes));
    ASSERT_FALSE(x.ok()) << c.name;
    EXPECT_EQ(x.code(), Errc::kInvalid) << c.name << ": " << x.message();
    EXPECT_NE(x.message().find(c.says), std::string::npos) << c.name << ": " << x.message();
  }
}

TEST_F(XPlaneReaderTest, EventCapIsTooLarge) {
  tr::XPlaneLimits limits;
  limits.max_events = 3;
  auto x = tr::ReadXPlane(Write(SmallSpace()), limits);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.code(), Errc::kTooLarge);
}

TEST_F(XPlaneReaderTest, MissingFile) {
  auto x = tr::ReadXPlane((dir_ / "absent.xplane.pb").string());
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.code(), Errc::kNotFound);
}

}  // namespace
