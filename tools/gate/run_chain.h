// The chain of attempts a job belongs to when `mt watch` restarted it: each restart plan
// names its parent (plan.h PlanRestart), so the chain is read backwards from the jobs' own
// plans and forwards from the approval records (a submitted restart plan whose parent is this
// job). Each attempt's log is scanned and triaged, and its restart record gives when the plan
// was asked for, decided and submitted: what goodput (tools/perf/goodput.h) needs.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "tools/perf/perf_answer.h"

namespace mt::tools {

// The goodput of the run `job` is one attempt of, or nullopt when it was never restarted nor
// is a restart. `now`: ISO-8601 for triage ("" = the clock). Never throws for a missing plan,
// log or record: what cannot be read becomes a note.
std::optional<GoodputView> GoodputOfRun(const std::filesystem::path& workspace,
                                        const std::filesystem::path& approvals_dir, const std::string& job,
                                        const std::string& now);

}  // namespace mt::tools
