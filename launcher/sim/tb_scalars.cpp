#include "launcher/sim/tb_scalars.h"

#include <cctype>

namespace mt::launch::sim {

std::vector<std::pair<std::string, double>> StepScalars(const Scenario& s, const StepRecord& r) {
  const double tokens = static_cast<double>(s.per_device_batch_size) * s.max_target_length;
  const double total_weights =
      tokens * static_cast<double>(s.hosts.size()) * static_cast<double>(s.gpus_per_node);
  std::vector<std::pair<std::string, double>> v = {
      {"learning/loss", r.loss},
      {"learning/grad_norm", r.grad_norm},
      {"learning/raw_grad_norm", r.raw_grad_norm},
      {"learning/param_norm", r.param_norm},
      {"learning/current_learning_rate", r.learning_rate},
      {"learning/total_weights", total_weights},
  };
  if (s.moe) v.emplace_back("learning/moe_lb_loss", r.moe_lb_loss);
  v.emplace_back("perf/step_time_seconds", r.seconds);
  v.emplace_back("perf/per_device_tflops", r.tflops * r.seconds);
  v.emplace_back("perf/per_device_tflops_per_sec", r.tflops);
  v.emplace_back("perf/per_device_tokens", tokens);
  v.emplace_back("perf/per_device_tokens_per_sec", r.tgs);
  return v;
}

std::string TbMetricName(const std::string& tag) {
  std::string out = "tb_";
  for (char c : tag) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

}  // namespace mt::launch::sim
