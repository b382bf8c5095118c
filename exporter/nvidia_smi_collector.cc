#include "exporter/nvidia_smi_collector.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "exporter/log.h"
#include "exporter/subprocess.h"
#include "exporter/text_util.h"

namespace mt::exporter {

const char* const kNvidiaSmiFields =
    "index,pci.bus_id,temperature.gpu,power.draw,clocks.sm,clocks.mem,memory.used,memory.total,"
    "ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total";

namespace {

constexpr size_t kColumns = 10;

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t comma = line.find(',', start);
    out.push_back(Trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::optional<std::vector<NvidiaGpuReading>> ParseNvidiaSmiCsv(const std::string& csv, std::string* error) {
  std::vector<NvidiaGpuReading> gpus;
  bool bad = false;
  ForEachLine(csv, [&](std::string_view line) {
    if (bad || Trim(line).empty()) return;
    auto f = SplitCsv(line);
    if (f.size() != kColumns) {
      *error = "nvidia-smi line has " + std::to_string(f.size()) + " columns, expected " + std::to_string(kColumns) +
               ": " + std::string(line.substr(0, 120));
      bad = true;
      return;
    }
    NvidiaGpuReading g;
    g.pci_bus_id = std::string(f[1]);
    g.temperature_c = ParseDouble(f[2]);
    g.power_w = ParseDouble(f[3]);
    g.sm_clock_mhz = ParseDouble(f[4]);
    g.mem_clock_mhz = ParseDouble(f[5]);
    g.mem_used_mib = ParseDouble(f[6]);
    g.mem_total_mib = ParseDouble(f[7]);
    g.ecc_corrected = ParseDouble(f[8]);
    g.ecc_uncorrected = ParseDouble(f[9]);
    gpus.push_back(std::move(g));
  });
  if (bad) return std::nullopt;
  std::sort(gpus.begin(), gpus.end(),
            [](const NvidiaGpuReading& a, const NvidiaGpuReading& b) { return a.pci_bus_id < b.pci_bus_id; });
  return gpus;
}

std::string FindNvidiaSmi(const std::string& configured) {
  if (configured.find('/') != std::string::npos) return ::access(configured.c_str(), X_OK) == 0 ? configured : "";
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + configured;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

NvidiaSmiCollector::NvidiaSmiCollector(std::string nvidia_smi, std::chrono::milliseconds interval)
    : smi_(std::move(nvidia_smi)), interval_(interval) {}

NvidiaSmiCollector::~NvidiaSmiCollector() {
  stop_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NvidiaSmiCollector::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void NvidiaSmiCollector::Loop() {
  while (!stop_) {
    auto next = std::chrono::steady_clock::now() + interval_;
    PollOnce();
    std::unique_lock lock(wake_mu_);
    wake_.wait_until(lock, next, [this] { return stop_.load(); });
  }
}

void NvidiaSmiCollector::PollOnce() {
  SubprocessOptions so;
  so.timeout = interval_;
  so.cancel = &stop_;
  so.capture_stderr = true;  // bounded, like the plugins' (a wedged driver can be chatty)
  so.max_stderr = 4096;
  so.max_output = 1u << 20;
  SubprocessResult r = RunSubprocess(
      {smi_, std::string("--query-gpu=") + kNvidiaSmiFields, "--format=csv,noheader,nounits"}, so);
  for (const auto& line : StderrLogLines("nvidia-smi", r.stderr_text, r.stderr_bytes, "at most 4096 bytes per run are logged")) {
    Log(line);
  }
  std::string error;
  std::optional<std::vector<NvidiaGpuReading>> parsed;
  if (!r.started) error = r.error;
  else if (r.timed_out) error = "nvidia-smi timed out";
  else if (r.exit_code != 0) error = "nvidia-smi exited " + std::to_string(r.exit_code) + ": " + std::string(Trim(r.output.substr(0, 200)));
  else parsed = ParseNvidiaSmiCsv(r.output, &error);

  std::lock_guard lock(mu_);
  if (!parsed) {
    if (last_ok_) Log("nvidia: " + error);  // once per failure streak
    last_ok_ = false;
    return;
  }
  last_ok_ = true;
  latest_ = std::move(*parsed);
  latest_at_ = std::chrono::steady_clock::now();
  have_reading_ = true;
}

bool NvidiaSmiCollector::Collect(MetricSink& sink) {
  std::lock_guard lock(mu_);
  if (!have_reading_ || std::chrono::steady_clock::now() - latest_at_ > 3 * interval_) return !have_reading_ && last_ok_;
  for (size_t i = 0; i < latest_.size(); ++i) {
    const NvidiaGpuReading& g = latest_[i];
    const std::string idx = std::to_string(i);
    LabelPairs l{{"gpu", idx}};
    if (g.temperature_c) sink.Gauge("hw_gpu_temperature_celsius", "GPU temperature (junction if available), degrees Celsius.", l, *g.temperature_c);
    if (g.power_w) sink.Gauge("hw_gpu_power_watts", "GPU socket power, watts.", l, *g.power_w);
    if (g.sm_clock_mhz) sink.Gauge("hw_gpu_clock_mhz", "GPU clock, MHz (type sclk = shader, mclk = memory).", {{"gpu", idx}, {"type", "sclk"}}, *g.sm_clock_mhz);
    if (g.mem_clock_mhz) sink.Gauge("hw_gpu_clock_mhz", "GPU clock, MHz (type sclk = shader, mclk = memory).", {{"gpu", idx}, {"type", "mclk"}}, *g.mem_clock_mhz);
    if (g.mem_used_mib) sink.Gauge("hw_gpu_vram_used_bytes", "VRAM in use, bytes.", l, *g.mem_used_mib * 1048576.0);
    if (g.mem_total_mib) sink.Gauge("hw_gpu_vram_total_bytes", "VRAM size, bytes.", l, *g.mem_total_mib * 1048576.0);
    if (g.ecc_uncorrected) sink.Counter("hw_gpu_ras_umc_ue_total", "Uncorrectable memory ECC errors (NVIDIA: aggregate uncorrected total).", l, *g.ecc_uncorrected);
    if (g.ecc_corrected) sink.Counter("hw_gpu_ras_umc_ce_total", "Correctable memory ECC errors (NVIDIA: aggregate corrected total).", l, *g.ecc_corrected);
  }
  return true;
}

}  // namespace mt::exporter
