#include "exporter/amdgpu_collector.h"

#include <algorithm>
#include <cmath>

#include "exporter/text_util.h"

namespace mt::exporter {

namespace {

std::optional<double> ReadNumber(const RootFs& fs, const std::string& path) {
  auto text = fs.Read(path);
  if (!text) return std::nullopt;
  if (auto v = ParseU64(*text)) return static_cast<double>(*v);
  if (auto v = ParseDouble(*text)) return *v;
  return std::nullopt;
}

double Round1(double v) { return std::round(v * 10.0) / 10.0; }

// Value after "<key>:" or "<key> " on its own line, e.g. "ue: 3" or "TOTAL_ERR_COR 2".
std::optional<double> KeyedValue(std::string_view text, std::string_view key) {
  std::optional<double> out;
  ForEachLine(text, [&](std::string_view line) {
    if (out) return;
    line = Trim(line);
    if (line.size() <= key.size() || line.substr(0, key.size()) != key) return;
    char sep = line[key.size()];
    if (sep != ':' && sep != ' ' && sep != '\t') return;
    if (auto v = ParseU64(line.substr(key.size() + 1))) out = static_cast<double>(*v);
  });
  return out;
}

struct RasBlock {
  const char* file;   // ras/aca_<file>
  const char* block;  // metric infix
};
constexpr RasBlock kRasBlocks[] = {
    {"aca_umc", "umc"}, {"aca_xgmi_wafl", "xgmi"}, {"aca_gfx", "gfx"},
    {"aca_mmhub", "mmhub"}, {"aca_sdma", "sdma"},
};

struct AerFile {
  const char* file;
  const char* field;
  const char* metric;
  const char* help;
};
constexpr AerFile kAerFiles[] = {
    {"aer_dev_correctable", "TOTAL_ERR_COR", "hw_gpu_pcie_correctable_total", "PCIe correctable errors reported by AER."},
    {"aer_dev_nonfatal", "TOTAL_ERR_NONFATAL", "hw_gpu_pcie_nonfatal_total", "PCIe non-fatal uncorrectable errors reported by AER."},
    {"aer_dev_fatal", "TOTAL_ERR_FATAL", "hw_gpu_pcie_fatal_total", "PCIe fatal uncorrectable errors reported by AER."},
};

}  // namespace

std::vector<AmdGpu> DiscoverAmdGpus(const RootFs& fs) {
  std::vector<AmdGpu> gpus;
  for (const auto& entry : fs.List("/sys/class/hwmon")) {
    std::string dir = "/sys/class/hwmon/" + entry;
    auto name = fs.Read(dir + "/name");
    if (!name || Trim(*name) != "amdgpu") continue;
    std::string pci;
    if (auto link = fs.ReadLink(dir + "/device")) {
      size_t slash = link->find_last_of('/');
      pci = slash == std::string::npos ? *link : link->substr(slash + 1);
    }
    gpus.push_back({dir, pci.empty() ? entry : pci});
  }
  std::sort(gpus.begin(), gpus.end(), [](const AmdGpu& a, const AmdGpu& b) { return a.pci < b.pci; });
  return gpus;
}

bool AmdGpuCollector::Collect(MetricSink& sink) {
  auto gpus = DiscoverAmdGpus(fs_);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const AmdGpu& g = gpus[i];
    const std::string idx = std::to_string(i);
    const std::string dev = g.hwmon + "/device";
    LabelPairs l{{"gpu", idx}};

    // Junction temperature when the driver exposes it, else memory, else edge.
    for (const char* t : {"/temp2_input", "/temp3_input", "/temp1_input"}) {
      if (auto v = ReadNumber(fs_, g.hwmon + t)) {
        sink.Gauge("hw_gpu_temperature_celsius", "GPU temperature (junction if available), degrees Celsius.", l, Round1(*v / 1000.0));
        break;
      }
    }
    // power1_input is instantaneous; older kernels expose only power1_average.
    for (const char* p : {"/power1_input", "/power1_average"}) {
      if (auto v = ReadNumber(fs_, g.hwmon + p)) {
        sink.Gauge("hw_gpu_power_watts", "GPU socket power, watts.", l, Round1(*v / 1e6));
        break;
      }
    }
    if (auto v = ReadNumber(fs_, g.hwmon + "/freq1_input"))
      sink.Gauge("hw_gpu_clock_mhz", "GPU clock, MHz (type sclk = shader, mclk = memory).", {{"gpu", idx}, {"type", "sclk"}}, *v / 1e6);
    if (auto v = ReadNumber(fs_, g.hwmon + "/freq2_input"))
      sink.Gauge("hw_gpu_clock_mhz", "GPU clock, MHz (type sclk = shader, mclk = memory).", {{"gpu", idx}, {"type", "mclk"}}, *v / 1e6);
    if (auto v = ReadNumber(fs_, dev + "/mem_info_vram_used"))
      sink.Gauge("hw_gpu_vram_used_bytes", "VRAM in use, bytes.", l, *v);
    if (auto v = ReadNumber(fs_, dev + "/mem_info_vram_total"))
      sink.Gauge("hw_gpu_vram_total_bytes", "VRAM size, bytes.", l, *v);

    // The driver's own directory is the canonical RAS location; it links to the device.
    std::string ras = "/sys/bus/pci/drivers/amdgpu/" + g.pci + "/ras";
    if (!fs_.IsDir(ras)) ras = dev + "/ras";
    for (const auto& b : kRasBlocks) {
      auto text = fs_.Read(ras + "/" + b.file);
      if (!text) continue;
      for (const char* kind : {"ue", "ce"}) {
        if (auto v = KeyedValue(*text, kind)) {
          std::string metric = std::string("hw_gpu_ras_") + b.block + "_" + kind + "_total";
          std::string help = std::string(kind[0] == 'u' ? "Uncorrectable" : "Correctable") +
                             " RAS errors in the " + b.block + " block (ras/" + b.file + ").";
          sink.Counter(metric, help, l, *v);
        }
      }
    }
    for (const auto& a : kAerFiles) {
      auto text = fs_.Read(dev + "/" + a.file);
      if (!text) continue;
      if (auto v = KeyedValue(*text, a.field)) sink.Counter(a.metric, a.help, l, *v);
    }
  }
  return true;
}

}  // namespace mt::exporter
