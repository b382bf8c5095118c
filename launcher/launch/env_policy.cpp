#include "launcher/launch/env_policy.h"

namespace mt::launch {
using base::Errc;
using base::Status;

namespace {

// Loader, interpreter and shell start-up variables, search paths, and anything that names
// a library or plugin to load. Matched before the allow-list, so `CUDA_*` does not admit
// CUDA_INJECTION64_PATH nor `NCCL_*` NCCL_NET_PLUGIN.
const std::vector<std::string>& DenyList() {
  static const std::vector<std::string> deny = {
      "LD_*", "DYLD_*", "PATH", "PYTHON*", "BASH_ENV", "ENV", "BASH_FUNC_*", "IFS", "SHELLOPTS", "BASHOPTS",
      "PS4", "PROMPT_COMMAND", "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYLIB", "RUBYOPT", "NODE_OPTIONS", "NODE_PATH",
      "GCONV_PATH", "GLIBC_TUNABLES", "MALLOC_*", "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "NLSPATH",
      "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "HOME", "TMPDIR", "SHELL", "USER", "LOGNAME", "SLURM_*", "MT_*"};
  return deny;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Names that by convention point a runtime at code to load (HSA_TOOLS_LIB, NCCL_NET_PLUGIN,
// CUDA_INJECTION64_PATH, ROCP_TOOL_LIB, XLA_PYTHON_CLIENT_…_PATH).
bool NamesCodeToLoad(const std::string& key) {
  for (const char* s : {"_PATH", "_LIB", "_LIBS", "_LIBRARY", "_PRELOAD"})
    if (EndsWith(key, s)) return true;
  return key.find("PLUGIN") != std::string::npos || key.find("INJECTION") != std::string::npos;
}

}  // namespace

const std::vector<std::string>& DefaultEnvAllowList() {
  static const std::vector<std::string> allow = {
      // compilers and runtimes of the training stacks
      "XLA_*", "JAX_*", "TF_*", "LIBTPU_*", "TPU_*", "TORCH_*", "NVTE_*", "ENABLE_XLA_DUMP",
      // collectives and fabrics
      "NCCL_*", "RCCL_*", "UCX_*", "FI_*", "GLOO_*",
      // GPU runtimes
      "CUDA_*", "HIP_*", "HSA_*", "ROCR_*", "ROCM_*", "AMD_*", "GPU_MAX_HW_QUEUES", "MIOPEN_*",
      // threading
      "OMP_NUM_THREADS", "MKL_NUM_THREADS",
      // mt-simtrain's knobs (GPU-less runs)
      "SIM_*"};
  return allow;
}

bool EnvKeyMatches(const std::string& key, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    if (!p.empty() && p.back() == '*') {
      if (key.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) return true;
    } else if (key == p) {
      return true;
    }
  }
  return false;
}

Status CheckEnvPassthroughKey(const std::string& key) {
  if (EnvKeyMatches(key, DenyList()) || NamesCodeToLoad(key))
    return Status(Errc::kInvalid, "_env_" + key + " is refused: " + key +
           " is a loader, interpreter, search-path or plugin variable, which would let a run load code of the "
           "requester's choosing");
  if (!EnvKeyMatches(key, DefaultEnvAllowList()))
    return Status(Errc::kInvalid, "_env_" + key + " is not an allowed model knob (allowed: XLA_*, JAX_*, NCCL_*, RCCL_*, TORCH_*, CUDA_*, HIP_*, "
           "HSA_*, … see docs/launcher.md); set other variables in the model config's env");
  return Status::Ok();
}

}  // namespace mt::launch
