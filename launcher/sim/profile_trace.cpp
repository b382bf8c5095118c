#include "launcher/sim/profile_trace.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>
#include <span>

#include "base/atomic_file.h"
#include "launcher/sim/xplane_writer.h"

namespace mt::launch::sim {
namespace {

struct KernelShare {
  const char* name;
  const char* hlo_op;        // prefix; the layer number makes it unique
  double share;              // of the pass's compute time
  const char* details;       // kernel_details
};

// hipBLASLt FP8 GEMMs, flash attention (a custom call) and XLA fusions of one decoder layer.
constexpr const char* kGemmA = "Cijk_Alik_Bljk_F8BS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x128_MI16x16x1_SN_LDSB1_GRVWA16_GRVWB16_ISA950";
constexpr const char* kGemmB = "Cijk_Alik_Bljk_F8BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x128_MI16x16x1_SN_LDSB1_GRVWA16_GRVWB8_ISA950";
constexpr const char* kGemmW = "Cijk_Ailk_Bjlk_F8BS_BH_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_GRVWA8_GRVWB16_ISA950";
constexpr const char* kGemmDetails = "regs:256 static_shared:0 dynamic_shared:65536 grid:1024,1,1 block:256,1,1 occ_pct:25";
constexpr const char* kFusionDetails = "regs:32 static_shared:0 dynamic_shared:0 grid:4096,1,1 block:256,1,1 occ_pct:100";
constexpr const char* kAttnDetails = "regs:128 static_shared:0 dynamic_shared:98304 grid:64,128,1 block:256,1,1 occ_pct:25";

const KernelShare kForward[] = {
    {"input_reduce_fusion", "input_reduce_fusion", 0.03, kFusionDetails},
    {kGemmA, "custom-call", 0.16, kGemmDetails},
    {"loop_add_fusion", "loop_add_fusion", 0.02, kFusionDetails},
    {"_attn_fwd", "custom-call.attn", 0.22, kAttnDetails},
    {kGemmB, "custom-call.o", 0.06, kGemmDetails},
    {"input_reduce_fusion_1", "input_reduce_fusion.1", 0.03, kFusionDetails},
    {kGemmA, "custom-call.gate_up", 0.26, kGemmDetails},
    {"loop_multiply_fusion", "loop_multiply_fusion", 0.03, kFusionDetails},
    {kGemmB, "custom-call.down", 0.13, kGemmDetails},
    {"input_reduce_fusion_2", "input_reduce_fusion.2", 0.04, kFusionDetails},
    {"loop_add_fusion_1", "loop_add_fusion.1", 0.02, kFusionDetails},
};
const KernelShare kBackward[] = {
    {"loop_add_fusion_2", "loop_add_fusion.2", 0.02, kFusionDetails},
    {kGemmW, "custom-call.down_wgrad", 0.09, kGemmDetails},
    {kGemmB, "custom-call.down_dgrad", 0.09, kGemmDetails},
    {"loop_multiply_fusion_1", "loop_multiply_fusion.1", 0.04, kFusionDetails},
    {kGemmW, "custom-call.gate_up_wgrad", 0.12, kGemmDetails},
    {kGemmA, "custom-call.gate_up_dgrad", 0.12, kGemmDetails},
    {"input_reduce_fusion_3", "input_reduce_fusion.3", 0.03, kFusionDetails},
    {"_attn_bwd", "custom-call.attn_bwd", 0.30, kAttnDetails},
    {kGemmW, "custom-call.qkv_wgrad", 0.07, kGemmDetails},
    {kGemmA, "custom-call.qkv_dgrad", 0.07, kGemmDetails},
    {"input_reduce_fusion_4", "input_reduce_fusion.4", 0.05, kFusionDetails},
};
constexpr const char* kRccl = "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)";
constexpr double kOverlap = 0.35;   // a collective's overlapped part, as a share of its pass's compute

int LayersOf(const Scenario& s) {
  if (s.layers > 0) return s.layers;
  if (s.model.find("405b") != std::string::npos) return 126;
  if (s.model.find("70b") != std::string::npos) return 80;
  return 32;
}

std::string ProfileDirName(double t) {
  std::time_t secs = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y_%m_%d_%H_%M_%S", &tm);
  return buf;
}

int64_t Ps(double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e12)); }

class ProfileBuilder {
 public:
  ProfileBuilder(const Scenario& s, double session_start) : s_(s), start_(session_start), rng_(s.seed * 7919 + 17) {
    int gpus = s.gpus_per_node;
    host_.id = 0;
    host_.name = "/host:CPU";
    host_.lines.push_back({3000, "Host Threads/3000", 0, {}});   // the Python training loop
    for (int g = 0; g < gpus; ++g) {
      XPlaneSpec d;
      d.id = g;
      d.name = "/device:GPU:" + std::to_string(g);
      d.stats.push_back({"device_vendor", std::string("AMD")});
      d.lines.push_back({1, "Stream #1", 0, {}});       // compute
      d.lines.push_back({2, "Stream #2", 0, {}});       // collectives
      devices_.push_back(std::move(d));
      host_.lines.push_back({4000 + g, "Host Threads/" + std::to_string(4000 + g), 0, {}});
    }
  }

  void Step(const StepRecord& r) {
    const int layers = LayersOf(s_);
    const double T = r.end - r.start;
    const double idle = T * (1 - s_.profile_compute_share - s_.profile_exposed_comm_share);
    const size_t gpus = devices_.size();
    std::normal_distribution<double> jitter(0, 0.004);
    // Start and length from rounded ends, so consecutive steps touch and never overlap.
    host_.lines[0].events.push_back({"train", Ps(r.start - start_), Ps(r.end - start_) - Ps(r.start - start_),
                                     {{"step_num", int64_t{r.step}}, {"_r", int64_t{1}}}});
    std::vector<double> t(gpus, r.start + 0.6 * idle);
    for (int pass = 0; pass < 2 * layers; ++pass) {
      bool fwd = pass < layers;
      int layer = fwd ? pass : 2 * layers - 1 - pass;
      double compute = s_.profile_compute_share * T * (fwd ? 1.0 : 2.0) / (3.0 * layers);
      double exposed = s_.profile_exposed_comm_share * T / (2.0 * layers);
      std::vector<double> arrive(gpus);
      for (size_t g = 0; g < gpus; ++g) {
        uint64_t corr = ++correlation_;
        // The pass is one graph launch, dispatched as the step starts.
        host_.lines[g + 1].events.push_back({"hipGraphLaunch", Ps(r.start - start_ + 2e-6 * pass), Ps(1.5e-6),
                                         {{"correlation_id", corr}}});
        double c = compute * (1 + jitter(rng_)) * (static_cast<int>(g) == s_.profile_slow_gpu ? 1 + s_.profile_slow_pct / 100 : 1);
        double at = t[g];
        for (const KernelShare& k : fwd ? std::span<const KernelShare>(kForward) : std::span<const KernelShare>(kBackward)) {
          Kernel(g, 0, k.name, std::string(k.hlo_op) + "." + std::to_string(layer), k.details, at, k.share * c, corr);
          at += k.share * c;
        }
        arrive[g] = t[g] + c * (1 - kOverlap);
        t[g] += c;
      }
      double done = *std::max_element(arrive.begin(), arrive.end()) + kOverlap * compute + exposed;
      for (size_t g = 0; g < gpus; ++g) {
        std::string op = (fwd ? "all-gather-start." : "reduce-scatter.") + std::to_string(layer);
        Kernel(g, 1, kRccl, op, "regs:64 static_shared:0 dynamic_shared:0 grid:16,1,1 block:256,1,1 occ_pct:12",
               arrive[g], done - arrive[g], correlation_ - gpus + g + 1);
        t[g] = std::max(t[g], done);
      }
    }
  }

  std::string Encode(const std::string& hostname) {
    std::vector<XPlaneSpec> planes{host_};
    planes.insert(planes.end(), devices_.begin(), devices_.end());
    return EncodeXSpace(planes, {hostname});
  }

 private:
  void Kernel(size_t g, size_t line, const std::string& name, const std::string& hlo_op, const char* details, double at,
              double dur, uint64_t corr) {
    devices_[g].lines[line].events.push_back({name, Ps(at - start_), Ps(at + dur - start_) - Ps(at - start_),
                                              {{"correlation_id", corr},
                                               {"hlo_op", hlo_op},
                                               {"hlo_module", std::string("jit_train_step")},
                                               {"program_id", int64_t{4201}},
                                               {"kernel_details", std::string(details)}}});
  }

  const Scenario& s_;
  double start_;
  std::mt19937_64 rng_;
  XPlaneSpec host_;
  std::vector<XPlaneSpec> devices_;
  uint64_t correlation_ = 1000;
};

}  // namespace

base::Status WriteProfileTrace(const Scenario& s, const Timeline& tl, const std::filesystem::path& tensorboard_dir,
                               std::filesystem::path* written) {
  written->clear();
  if (s.profile_steps <= 0) return base::Status::Ok();
  std::vector<const StepRecord*> steps;
  for (const StepRecord& r : tl.steps)
    if (r.step >= s.profile_first_step && r.step < s.profile_first_step + s.profile_steps) steps.push_back(&r);
  if (steps.empty()) return base::Status::Ok();   // the run stopped before the profiler started
  double session_start = steps.front()->start - 0.05;
  ProfileBuilder b(s, session_start);
  for (const StepRecord* r : steps) b.Step(*r);
  const std::string host = s.hosts.empty() ? "node0" : s.hosts.front();
  std::filesystem::path dir = tensorboard_dir / "plugins" / "profile" / ProfileDirName(session_start);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return base::Status(base::Errc::kIo, "cannot create " + dir.string() + ": " + ec.message());
  *written = dir / (host + ".xplane.pb");
  return base::WriteFileAtomic(*written, b.Encode(host));
}

}  // namespace mt::launch::sim
