#include "launcher/launch/backend.h"

namespace mt::launch {

const Backend& LocalBackendInstance();   // backend_local.cpp
const Backend& SlurmBackendInstance();   // backend_slurm.cpp
const Backend& K8sBackendInstance();     // backend_k8s.cpp

const Backend* FindBackend(const std::string& name) {
  for (const Backend* b : {&LocalBackendInstance(), &SlurmBackendInstance(), &K8sBackendInstance()})
    if (b->name() == name) return b;
  return nullptr;
}

std::string BackendNamesText() { return "local, slurm or k8s"; }

}  // namespace mt::launch
