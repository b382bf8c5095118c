#include "launcher/launch/k8s_manifest.h"

#include <yaml-cpp/yaml.h>

namespace mt::launch {

std::string K8sJobName(const Plan& p) {
  std::string raw = "jax-" + p.spec.model + "-" + p.job_id.substr(p.job_id.find('-') + 1);
  std::string n;
  for (char c : raw) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    n += (std::isalnum(static_cast<unsigned char>(l)) ? l : '-');
  }
  if (n.size() > 63) n = n.substr(n.size() - 63);   // keep the unique timestamp/random tail
  while (!n.empty() && !std::isalnum(static_cast<unsigned char>(n.front()))) n.erase(0, 1);
  while (!n.empty() && !std::isalnum(static_cast<unsigned char>(n.back()))) n.pop_back();
  return n;
}

std::string RenderK8sManifest(const Plan& p, const K8sOptions& o) {
  const std::string name = K8sJobName(p);
  const std::string ws = p.workspace.string();
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "batch/v1";
  y << YAML::Key << "kind" << YAML::Value << "Job";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << name;
  y << YAML::Key << "namespace" << YAML::Value << o.namespace_;
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value
    << "mt" << YAML::Key << "mt/job-id" << YAML::Value << p.job_id << YAML::EndMap;
  y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key << "mt/plan-sha256" << YAML::Value << p.hash
    << YAML::Key << "mt/job-name" << YAML::Value << p.job_name << YAML::EndMap;
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "completionMode" << YAML::Value << "Indexed";
  y << YAML::Key << "completions" << YAML::Value << p.nodes;
  y << YAML::Key << "parallelism" << YAML::Value << p.nodes;
  y << YAML::Key << "backoffLimit" << YAML::Value << 0;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "restartPolicy" << YAML::Value << "Never";
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "trainer";
  y << YAML::Key << "image" << YAML::Value << o.image;
  y << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << p.binaries.at("mt-job") << "task"
    << (p.artifact_dir / "plan.json").string() << YAML::EndSeq;
  y << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "NODE_RANK" << YAML::Key << "valueFrom" << YAML::Value
    << YAML::BeginMap << YAML::Key << "fieldRef" << YAML::Value << YAML::BeginMap << YAML::Key << "fieldPath" << YAML::Value
    << "metadata.annotations['batch.kubernetes.io/job-completion-index']" << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  for (const auto& [k, v] : std::map<std::string, std::string>{
           {"JOB_ID", p.job_id}, {"JOB_NAME", p.job_name}, {"NNODES", std::to_string(p.nodes)}, {"JOB_WORKSPACE", ws}})
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << k << YAML::Key << "value" << YAML::Value << v << YAML::EndMap;
  y << YAML::EndSeq;
  const std::string gpus = p.model.count("gpus_per_node") ? p.model.at("gpus_per_node") : "8";
  y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value << YAML::BeginMap
    << YAML::Key << o.gpu_resource << YAML::Value << std::stoi(gpus) << YAML::EndMap << YAML::EndMap;
  y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << "workspace" << YAML::Key << "mountPath" << YAML::Value << ws << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq;   // container, containers
  y << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << "workspace" << YAML::Key << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap << YAML::Key << "claimName"
    << YAML::Value << o.pvc << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;   // pod spec, template, job spec, root
  return std::string(y.c_str()) + "\n";
}

}  // namespace mt::launch
