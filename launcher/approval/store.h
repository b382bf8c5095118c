// The approvals store: one JSON file per plan under a directory that several servers (and
// the `mt approve` CLI) may share, e.g. on the cluster's shared filesystem. Every change is
// a read-modify-write under an exclusive flock on <dir>/.lock, and every file is written to
// a temp file, fsync'd and renamed into place: a crash never leaves a half-written record.
//
// A plan's life:  pending ──approve──► approved ──► submitted | failed
//                        ├─deny────► denied
//                        └─(ttl)───► expired
// Approval is the single transition out of `pending`, bound to the plan hash the approver
// saw; whoever wins it executes the plan, so one approval yields at most one submission.
#pragma once
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace mt::launch::approval {

struct PlanRecord {
  std::string id;            // 32 hex digits (128 random bits)
  std::string kind;          // submit | cancel
  std::string hash;          // sha256 of the plan (launch::Plan::hash for submits)
  nlohmann::json plan;       // the full plan, exactly what gets executed
  std::string summary;       // human-readable rendering shown to approvers
  std::string args_digest;   // digest of the tool arguments that produced the plan
  std::string requester, requester_role;
  std::string state;         // pending | approved | denied | expired | submitted | failed
  std::string approver, via, reason;   // via: terminal | web | elicitation | input_required | policy
  std::string job_id, result, error;
  int64_t created = 0, expires = 0, decided = 0, finished = 0;   // unix seconds

  nlohmann::json ToJson() const;
  static base::Status FromJson(const nlohmann::json& j, PlanRecord* out);
};

// True for a well-formed plan id (also what keeps ids from naming other files).
bool ValidPlanId(const std::string& id);

class ApprovalStore {
 public:
  explicit ApprovalStore(std::filesystem::path dir, std::chrono::seconds ttl = std::chrono::minutes(15));

  // Records a new pending plan (fills id, state, created, expires). kTooMany when the
  // requester is at the cap below; kIo when the store cannot be written.
  // With `max_pending_per_requester` > 0, refuses a plan whose requester (rec->requester)
  // already has that many pending: a flood of plans is how an approver gets tired enough to
  // approve without reading.
  base::Status Create(PlanRecord* rec, int64_t now, std::size_t max_pending_per_requester = 0);

  // Like Create, under an id the caller derived from what the plan is for (e.g. "restart 2 of
  // job 8311"), so that asking twice — a supervisor killed and started again — records one
  // plan: when a record with rec->id exists, *rec becomes that record and *created false.
  // kInvalid for an id ValidPlanId refuses.
  base::Status CreateOnce(PlanRecord* rec, int64_t now, bool* created);

  // Reads a record; a pending plan past its expiry is stored as expired first. kNotFound for
  // an unknown (or malformed) id, kInvalid for a record that does not parse.
  base::Status Get(const std::string& id, int64_t now, PlanRecord* out);

  // All records, newest first (expiry applied).
  std::vector<PlanRecord> List(int64_t now);

  // pending → approved (approve) or denied. Fails unless the plan is pending, unexpired and
  // its hash equals `expected_hash` (the plan the approver was shown): kConflict otherwise.
  // On success `out` is the updated record and the caller, alone, executes an approved plan.
  base::Status Decide(const std::string& id, const std::string& expected_hash, bool approve, const std::string& approver,
                     const std::string& via, const std::string& reason, int64_t now, PlanRecord* out);

  // approved → submitted (error empty) or failed, with the job id / backend message;
  // kConflict unless the plan is approved.
  base::Status Finish(const std::string& id, const std::string& job_id, const std::string& result,
                     const std::string& error, int64_t now, PlanRecord* out);

  const std::filesystem::path& dir() const { return dir_; }
  std::chrono::seconds ttl() const { return ttl_; }

 private:
  // Runs `fn` with the store locked and returns its Status.
  base::Status Locked(const std::function<base::Status()>& fn);
  base::Status Load(const std::string& id, PlanRecord* out) const;
  base::Status Save(const PlanRecord& rec) const;
  // A new record: pending from `now` until its time to live, undecided; then saved.
  base::Status SaveNew(PlanRecord* rec, int64_t now) const;
  // Every readable record, with the store already locked by the caller.
  void ForEachRecordLocked(const std::function<void(PlanRecord&)>& fn) const;
  std::filesystem::path PathOf(const std::string& id) const { return dir_ / (id + ".json"); }

  std::filesystem::path dir_;
  std::chrono::seconds ttl_;
};

}  // namespace mt::launch::approval
