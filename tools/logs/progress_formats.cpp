#include "tools/logs/progress_formats.h"

#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <string>

namespace mt::tools {

const std::vector<ProgressFormat>& ProgressFormats() {
  // Each row is the framework's own print statement, as in its source and its users' logs.
  static const std::vector<ProgressFormat> formats = {
      // Megatron-LM / Megatron-DeepSpeed training_log():
      //  iteration      100/  500000 | consumed samples: 12800 | elapsed time per iteration (ms): 1234.5 |
      //  throughput per GPU (TFLOP/s/GPU): 150.2 | learning rate: 1.0E-04 | ... | lm loss: 5.123E+00 | ...
      {"megatron", "elapsed time per iteration", false, R"(\biteration\s+(\d+)\s*/\s*(\d+)\s*\|)",
       R"(elapsed time per iteration \(ms\):\s*([\d.]+))", 0.001, R"(TFLOP/s/GPU\):\s*([\d.]+))", nullptr,
       R"(tokens per GPU per second[^:]*:\s*([\d.]+))", R"(\blm loss:\s*([\d.Ee+-]+))"},
      // torchtitan metrics logger: step:  1  loss: 12.0323  memory: 14.06GiB(17.79%)  tps: 1,235  tflops: 71.56  mfu: 7.24%
      {"torchtitan", "step:", false, R"(\bstep:\s*(\d+)\s+loss:\s*[\d.]+)", nullptr, 1, R"(\btflops:\s*([\d.]+))",
       R"(\bmfu:\s*([\d.]+)%)", R"(\btps:\s*([\d,]+))", R"(\bloss:\s*([\d.Ee+-]+))"},
      // DeepSpeed engine: [Rank 0] step=100, skipped=0, lr=[...], mom=[...]
      {"deepspeed", ", skipped=", true, R"(\bstep=(\d+), skipped=\d+)"},
      // PyTorch Lightning / NeMo progress bar postfix: ..., global_step=208.0, ...
      {"lightning", "global_step=", true, R"(\bglobal_step=(\d+)(?:\.0+)?\b)", nullptr, 1, nullptr, nullptr, nullptr,
       R"(\b(?:reduced_train_loss|train_loss|loss)=([\d.Ee+-]+))"},
      // Levanter: Progress on:train 200it/200it rate:3.3s/it elapsed:23:52 postfix:loss=3.1
      {"levanter", "Progress on:", true, R"(Progress on:\S+ (\d+)it/(\d+)it)", R"(\brate:([\d.]+)s/it)", 1, nullptr,
       nullptr, nullptr, R"(\bloss=([\d.Ee+-]+))"},
      // Hugging Face Trainer with the step logged: {'loss': 2.31, ..., 'step': 120}
      {"hf_trainer", "'step': ", true, R"('step': (\d+))", nullptr, 1, nullptr, nullptr, nullptr,
       R"('loss': ([\d.Ee+-]+))"},
      // Plain training loops: "Step: 175 | Loss: 7.53 | Tokens per second: 7610.15",
      // "step 120/5000, loss 2.31", "Step [120/5000] - train_loss: 2.31"; a step time in
      // seconds when they print one ("step_time 0.209s", "time: 1.52 s").
      {"step_loss", "tep", false,
       R"((?i)\bstep\s*[:=]?\s*\[?\s*(\d+)(?:\s*/\s*(\d+))?\s*\]?\s*[|,;-]?\s*(?:train[_ ])?loss\b)",
       R"((?i)\b(?:step[_ ]?)?time\s*[:=]?\s*([\d.]+)\s*s\b)", 1,
       R"((?i)\bTFLOPs?:\s*([\d.]+))", R"((?i)\bMFU(?: \(%\))?:\s*([\d.]+))", R"((?i)\btokens per second:\s*([\d.]+))",
       R"((?i)\bloss\s*[:=]?\s*([\d.Ee+-]+))"},
  };
  return formats;
}

namespace {

struct Compiled {
  std::unique_ptr<RE2> step, seconds, tflops, mfu, tgs, loss;
};

std::unique_ptr<RE2> Make(const char* p) { return p ? std::make_unique<RE2>(p) : nullptr; }

const std::vector<Compiled>& CompiledFormats() {
  static const std::vector<Compiled> compiled = [] {
    std::vector<Compiled> v;
    for (const auto& f : ProgressFormats())
      v.push_back({Make(f.step), Make(f.seconds), Make(f.tflops), Make(f.mfu), Make(f.tgs), Make(f.loss)});
    return v;
  }();
  return compiled;
}

void Number(const std::unique_ptr<RE2>& re, std::string_view s, double* out, double scale = 1) {
  if (!re) return;
  std::string v;
  if (!RE2::PartialMatch(s, *re, &v)) return;
  try {
    *out = std::stod(v) * scale;
  } catch (const std::exception&) {
  }
}

}  // namespace

bool ParseProgressLine(std::string_view line, ProgressFields* out, int* format) {
  const auto& formats = ProgressFormats();
  const auto& compiled = CompiledFormats();
  for (size_t i = 0; i < formats.size(); ++i) {
    const ProgressFormat& f = formats[i];
    size_t at = f.last_occurrence ? line.rfind(f.literal) : line.find(f.literal);
    if (at == std::string_view::npos) continue;
    // A progress bar's last update: from its last '\r' (or the literal's line start).
    std::string_view s = line;
    if (f.last_occurrence) {
      size_t cr = line.rfind('\r', at);
      if (cr != std::string_view::npos) s = line.substr(cr + 1);
    }
    const Compiled& c = compiled[i];
    int64_t step = 0;
    std::string total;
    if (c.step->NumberOfCapturingGroups() >= 2) {
      if (!RE2::PartialMatch(s, *c.step, &step, &total)) continue;
    } else if (!RE2::PartialMatch(s, *c.step, &step)) {
      continue;
    }
    if (step < 0) continue;
    ProgressFields p;
    p.step = step;
    if (!total.empty()) {
      try {
        p.total = std::stoll(total);
      } catch (const std::exception&) {
      }
    }
    Number(c.seconds, s, &p.seconds, f.seconds_scale);
    Number(c.tflops, s, &p.tflops);
    Number(c.mfu, s, &p.mfu);
    std::string tgs;
    if (c.tgs && RE2::PartialMatch(s, *c.tgs, &tgs)) {
      tgs.erase(std::remove(tgs.begin(), tgs.end(), ','), tgs.end());
      try {
        p.tgs = std::stod(tgs);
      } catch (const std::exception&) {
      }
    }
    Number(c.loss, s, &p.loss);
    *out = p;
    *format = static_cast<int>(i);
    return true;
  }
  return false;
}

}  // namespace mt::tools
