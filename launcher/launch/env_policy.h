// Which environment variables a run's `_env_KEY=VALUE` passthrough may set.
//
// Passthrough exists for model knobs (XLA_FLAGS, NCCL_DEBUG, …). The same mechanism could
// otherwise set what makes a process load or run code of the requester's choosing
// (LD_PRELOAD, PATH, PYTHONPATH, BASH_ENV, NCCL_NET_PLUGIN, CUDA_INJECTION64_PATH, …), and a
// plan approved for its model and node count would then run anything. So a key must match
// the allow-list (prefix patterns ending in `*`, or exact names) AND must not match the
// hard deny-list, which no configuration can lift; a CI policy may narrow the allow-list
// further (policy.<role>.env).
#pragma once
#include <string>
#include <vector>

#include "base/status.h"

namespace mt::launch {

// The allow-list used when no narrower one applies.
const std::vector<std::string>& DefaultEnvAllowList();

// True when `key` matches one of `patterns` ("NCCL_*" = prefix, else exact).
bool EnvKeyMatches(const std::string& key, const std::vector<std::string>& patterns);

// Ok when `_env_<key>` may be passed through, else kInvalid with the reason (a sentence
// naming the key).
base::Status CheckEnvPassthroughKey(const std::string& key);

}  // namespace mt::launch
