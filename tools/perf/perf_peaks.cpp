#include "tools/perf/perf_peaks.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace mt::tools {
namespace {

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

GpuPeaks BuiltIn() {
  GpuPeaks p;
  p.source = "built-in (configs/gpu_peaks.yaml not found)";
  p.table = {{"MI355X", {{"bf16", 2500}, {"fp8", 5000}}}, {"MI325X", {{"bf16", 1307}, {"fp8", 2615}}},
             {"MI300X", {{"bf16", 1307}, {"fp8", 2615}}}, {"H100", {{"bf16", 989}, {"fp8", 1979}}},
             {"H200", {{"bf16", 989}, {"fp8", 1979}}},    {"B200", {{"bf16", 2250}, {"fp8", 4500}}}};
  return p;
}

GpuPeaks ReadFile(const std::filesystem::path& file) {
  GpuPeaks p;
  p.source = file.string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const std::exception& e) {
    throw std::runtime_error("GPU peak table " + file.string() + ": " + e.what());
  }
  if (!root.IsMap()) throw std::runtime_error("GPU peak table " + file.string() + ": expected a map of GPU → {dtype: TFLOP/s}");
  for (const auto& gpu : root) {
    if (!gpu.second.IsMap())
      throw std::runtime_error("GPU peak table " + file.string() + ": entry '" + gpu.first.as<std::string>() + "' is not a map");
    for (const auto& d : gpu.second) {
      double v = 0;
      try {
        v = d.second.as<double>();
      } catch (const std::exception&) {
        throw std::runtime_error("GPU peak table " + file.string() + ": " + gpu.first.as<std::string>() + "." +
                                 d.first.as<std::string>() + " is not a number");
      }
      if (!(v > 0)) throw std::runtime_error("GPU peak table " + file.string() + ": peaks must be positive");
      p.table[Upper(gpu.first.as<std::string>())][Lower(d.first.as<std::string>())] = v;
    }
  }
  return p;
}

std::filesystem::path Exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p : std::filesystem::path();
}

}  // namespace

std::optional<double> GpuPeaks::Find(const std::string& gpu, const std::string& dtype) const {
  auto it = table.find(Upper(gpu));
  if (it == table.end()) return std::nullopt;
  std::string d = Lower(dtype);
  if (d == "bfloat16") d = "bf16";
  if (auto x = it->second.find(d); x != it->second.end()) return x->second;
  if (auto x = it->second.find("bf16"); x != it->second.end()) return x->second;
  return std::nullopt;
}

GpuPeaks LoadGpuPeaks(const std::filesystem::path& file) {
  if (!file.empty()) return ReadFile(file);
  if (const char* env = std::getenv("MT_GPU_PEAKS"); env && *env) return ReadFile(env);
  std::filesystem::path found = Exists("configs/gpu_peaks.yaml");
  if (found.empty()) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    // build/tools/mt → <repo>/configs; also an installed <prefix>/bin/mt → <prefix>/share/mt/configs.
    for (auto dir = exe.parent_path(); !ec && !dir.empty() && found.empty(); dir = dir.parent_path()) {
      found = Exists(dir / "configs" / "gpu_peaks.yaml");
      if (dir == dir.root_path()) break;
    }
  }
  return found.empty() ? BuiltIn() : ReadFile(found);
}

}  // namespace mt::tools
