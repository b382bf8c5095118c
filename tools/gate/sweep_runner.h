// Runs a sweep: every (model, nodes) of the spec on every code state, through the launcher
// and the approval gate under the `ci` policy (each plan recorded, approved by the policy
// and audited like a submit_job call from a CI token; a plan the policy refuses stops the
// sweep before anything is submitted), then waits for the jobs and measures steady-state
// TGS from each log.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tools/gate/approval_gate.h"
#include "tools/gate/sweep_report.h"
#include "tools/gate/sweep_spec.h"

namespace mt::tools {

// A code state: a checkout whose configs/models (or a models directory itself) defines the
// models the launcher runs.
struct SweepState {
  std::string name;
  std::filesystem::path dir;
};

struct SweepEnv {
  ApprovalEnv approval;                   // workspace, store, audit log, policy
  std::string requester = "mt sweep";     // recorded as the plan's requester (role ci)
  double poll_seconds = 1.0;
  std::function<void(const std::string&)> progress;   // one line per event
  // Polled between submissions and while waiting: once true, no further run is submitted,
  // every job still running is cancelled and its result is `cancelled`.
  std::function<bool()> cancelled;
};

// "" with `results` filled (one per state × run × node count, in spec order), or an error
// when nothing could be run (bad state, policy refusal, audit log unwritable). Runs that
// fail individually are results with status failed / timeout / error; runs of a cancelled
// sweep are `cancelled` (their jobs cancelled, or never submitted).
std::string RunSweep(const SweepSpec& spec, const std::vector<SweepState>& states, const SweepEnv& env,
                     std::vector<SweepResult>* results);

// The models directory of a code state: <dir>/configs/models when it exists, else `dir`
// when it holds *.yml model configs. Throws std::runtime_error naming the state otherwise.
std::filesystem::path StateModelsDir(const SweepState& state);

}  // namespace mt::tools
