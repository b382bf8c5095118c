// Model configs: configs/models/<name>.yml (+ optional <name>.env), and how a short model
// name resolves to one of them (reference/maxtext-slurm.md §2.2): an exact file name wins,
// else the name must be a substring of exactly one config. Unlike the original, an
// ambiguous name is an error that lists every candidate.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace mt::launch {

struct ModelConfig {
  std::string name;                    // file stem, e.g. "llama2-70b"
  std::filesystem::path file;          // the .yml
  std::filesystem::path env_file;      // <name>.env when present, else empty
  std::string description;
  std::map<std::string, std::string> parallelism;   // MaxText keys, e.g. ici_fsdp_parallelism: "8"
  int per_device_batch_size = 1;
  int max_target_length = 4096;
  int steps = 50;
  int gpus_per_node = 8;
  double tgs_low = 0, tgs_high = 0;    // expected steady tokens/s/device band
  bool moe = false;
  std::vector<std::string> train_command;           // argv template; empty = the simulator
  std::map<std::string, std::string> env;           // from the .env file (KEY=VALUE lines)
};

// "model[[:alias]:tag]" peeled from the right; three or more colons are an error.
struct ModelSpec {
  std::string model, alias, tag;
};
// kInvalid with what is wrong in the spec.
base::Status ParseModelSpec(const std::string& text, ModelSpec* out);

// Every config name in `dir` (sorted).
std::vector<std::string> ListModels(const std::filesystem::path& dir);

// Resolves `name` in `dir`. On failure returns false and sets *error (unknown: lists the
// supported models; ambiguous: lists the candidates).
bool ResolveModelName(const std::filesystem::path& dir, const std::string& name, std::string* resolved,
                      std::string* error);

// Loads and validates configs/models/<name>.yml (+ .env). kInvalid (or kNotFound for an
// unreadable .env) naming the file and the problem.
base::Status LoadModelConfig(const std::filesystem::path& dir, const std::string& name, ModelConfig* out);

// Where model configs live: $MT_MODELS_DIR, else ./configs/models, else the source tree's.
std::filesystem::path DefaultModelsDir();

}  // namespace mt::launch
