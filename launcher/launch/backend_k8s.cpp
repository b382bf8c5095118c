// The Kubernetes backend: kubectl apply of the rendered Job manifest; kubectl get / delete.

#include "launcher/launch/backend.h"
#include "launcher/launch/job_dir.h"
#include "launcher/launch/process.h"
#include "launcher/launch/k8s_manifest.h"

namespace mt::launch {
using base::Errc;
using base::Status;
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class K8sBackend : public Backend {
 public:
  std::string name() const override { return "k8s"; }
  std::string JobIdBeforeSubmit(const Plan& p, const std::string& rand_hex) const override {
    std::string c = p.created;
    c[8] = '-';
    return "k8s-" + c + "-" + rand_hex;
  }
  std::vector<std::string> SubmitCommand(const Plan& p) const override {
    return {"kubectl", "apply", "-f", (p.artifact_dir / "job.k8s.yaml").string()};
  }
  void AddPlanFiles(const Plan& p, std::map<std::string, std::string>* files) const override {
    (*files)["job.k8s.yaml"] = RenderK8sManifest(p, {});
  }

  Status Submit(const Plan& p, SubmitResult* r) const override {
    if (FindOnPath("kubectl").empty())
      return Status(Errc::kNotFound, "kubectl not found on PATH; `mt submit --backend k8s --dry-run --json` prints the rendered manifest");
    auto ap = RunCapture(p.submit_argv, {}, 120);
    if (ap.status != 0) return Status(Errc::kFailed, "kubectl apply failed (exit " + std::to_string(ap.status) + "): " + TrimOutput(ap.err + ap.out + ap.error));
    fs::path dir;
    json rec = LaunchRecordJson(p, p.job_id);
    rec["k8s_job"] = K8sJobName(p);
    if (Status st = CreateJobDir(p, p.job_id, rec, &dir); !st.ok()) {
      RunCapture({"kubectl", "delete", "job", K8sJobName(p)}, {}, 60);
      return st;
    }
    r->job_id = p.job_id;
    r->job_dir = dir;
    r->log = p.workspace / (JobDirName(p, p.job_id) + ".log");
    return Status::Ok();
  }

  void FillStatus(const LaunchedJob& job, json* s) const override {
    if (FindOnPath("kubectl").empty()) {
      (*s)["source"] = "kubectl not found";
      return;
    }
    auto k = RunCapture({"kubectl", "get", "job", job.record.value("k8s_job", ""), "-o", "jsonpath={.status}"}, {}, 30);
    (*s)["state"] = k.status == 0 ? TrimOutput(k.out) : "UNKNOWN";
    (*s)["source"] = "kubectl";
  }

  Status Cancel(const LaunchedJob& job, std::string* message) const override {
    auto r = RunCapture({"kubectl", "delete", "job", job.record.value("k8s_job", "")}, {}, 60);
    if (r.status != 0) return Status(Errc::kFailed, "kubectl delete failed: " + TrimOutput(r.err + r.out + r.error));
    *message = TrimOutput(r.out);
    return Status::Ok();
  }
};

}  // namespace

const Backend& K8sBackendInstance() {
  static const K8sBackend b;
  return b;
}

}  // namespace mt::launch
