// Kubernetes backend: the plan as an Indexed Job manifest (one pod per node; the pod's
// completion index is NODE_RANK). Applied with `kubectl apply -f` when kubectl exists.
#pragma once
#include <string>

#include "launcher/launch/plan.h"

namespace mt::launch {

struct K8sOptions {
  std::string namespace_ = "default";
  std::string image = "rocm/jax-training:maxtext-v26.2";
  std::string pvc = "mt-shared";              // holds the workspace, mounted at the same path
  std::string gpu_resource = "amd.com/gpu";
};

// Job name: "jax-<model>-<ts>-<rand>", lowercased, [a-z0-9-] only, at most 63 characters.
std::string K8sJobName(const Plan& p);
std::string RenderK8sManifest(const Plan& p, const K8sOptions& o);

}  // namespace mt::launch
