#include "launcher/approval/store.h"

#include "base/atomic_file.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

namespace mt::launch::approval {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string RandomId() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) return "";
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) s += {kHex[c >> 4], kHex[c & 15]};
  return s;
}

using base::Errc;
using base::Status;

Status Errno(const std::string& what) { return base::StatusOfErrno(errno, what); }

}  // namespace

bool ValidPlanId(const std::string& id) {
  if (id.size() != 32) return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

json PlanRecord::ToJson() const {
  return json{{"id", id},
              {"kind", kind},
              {"hash", hash},
              {"plan", plan},
              {"summary", summary},
              {"args_digest", args_digest},
              {"requester", requester},
              {"requester_role", requester_role},
              {"state", state},
              {"approver", approver},
              {"via", via},
              {"reason", reason},
              {"job_id", job_id},
              {"result", result},
              {"error", error},
              {"created", created},
              {"expires", expires},
              {"decided", decided},
              {"finished", finished}};
}

Status PlanRecord::FromJson(const json& j, PlanRecord* r) {
  try {
    r->id = j.at("id");
    r->kind = j.at("kind");
    r->hash = j.at("hash");
    r->plan = j.at("plan");
    r->summary = j.at("summary");
    r->args_digest = j.value("args_digest", "");
    r->requester = j.at("requester");
    r->requester_role = j.at("requester_role");
    r->state = j.at("state");
    r->approver = j.value("approver", "");
    r->via = j.value("via", "");
    r->reason = j.value("reason", "");
    r->job_id = j.value("job_id", "");
    r->result = j.value("result", "");
    r->error = j.value("error", "");
    r->created = j.at("created");
    r->expires = j.at("expires");
    r->decided = j.value("decided", int64_t{0});
    r->finished = j.value("finished", int64_t{0});
  } catch (const std::exception& e) {
    return Status(Errc::kInvalid, std::string("malformed approval record: ") + e.what());
  }
  return Status::Ok();
}

ApprovalStore::ApprovalStore(fs::path dir, std::chrono::seconds ttl) : dir_(std::move(dir)), ttl_(ttl) {}

Status ApprovalStore::Locked(const std::function<Status()>& fn) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status(base::ErrcOf(ec.value()), "cannot create approvals directory " + dir_.string() + ": " + ec.message());
  const fs::path lock = dir_ / ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("cannot open " + lock.string());
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      Status e = Errno("cannot lock " + lock.string());
      ::close(fd);
      return e;
    }
  }
  Status st;
  try {
    st = fn();
  } catch (const std::exception& e) {   // a JSON type error inside fn: reported, lock released
    st = Status(Errc::kInvalid, e.what());
  }
  ::close(fd);
  return st;
}

Status ApprovalStore::Load(const std::string& id, PlanRecord* out) const {
  if (!ValidPlanId(id)) return Status(Errc::kNotFound, "no such plan '" + id + "' (a plan id is 32 hex digits)");
  std::ifstream in(PathOf(id));
  if (!in) return Status(Errc::kNotFound, "no such plan " + id);
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return Status(Errc::kInvalid, "approval record " + id + " is not valid JSON");
  if (Status st = PlanRecord::FromJson(j, out); !st.ok()) return st;
  if (out->id != id) return Status(Errc::kInvalid, "approval record " + id + " names another plan (" + out->id + ")");
  return Status::Ok();
}

void ApprovalStore::ForEachRecordLocked(const std::function<void(PlanRecord&)>& fn) const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() != 37 || e.path().extension() != ".json") continue;
    PlanRecord r;
    if (Load(name.substr(0, 32), &r).ok()) fn(r);
  }
}

// Atomically and durably (fsync of the file, rename, fsync of the directory), readable by
// its owner only.
Status ApprovalStore::Save(const PlanRecord& rec) const {
  return base::WriteFileAtomic(PathOf(rec.id), rec.ToJson().dump(1) + "\n", {.mode = 0600, .durable = true});
}

Status ApprovalStore::SaveNew(PlanRecord* rec, int64_t now) const {
    rec->state = "pending";
    rec->created = now;
    rec->expires = now + ttl_.count();
    rec->approver.clear();
    rec->via.clear();
    rec->decided = rec->finished = 0;
  return Save(*rec);
}

Status ApprovalStore::Create(PlanRecord* rec, int64_t now, std::size_t max_pending_per_requester) {
  return Locked([&]() -> Status {
    if (max_pending_per_requester > 0) {
      // Counted under the lock, so a burst of parallel requests cannot slip past the cap.
      std::size_t pending = 0;
      ForEachRecordLocked([&](PlanRecord& r) {
        pending += r.state == "pending" && now < r.expires && r.requester == rec->requester;
      });
      if (pending >= max_pending_per_requester)
        return Status(Errc::kTooMany, rec->requester + " already has " + std::to_string(pending) +
                                          " plans waiting for approval (the limit is " +
                                          std::to_string(max_pending_per_requester) +
                                          "); wait until a human decides them or they expire, then ask again");
    }
    for (int attempt = 0; attempt < 4; ++attempt) {
      rec->id = RandomId();
      if (rec->id.empty()) return Status(Errc::kIo, "no randomness for a plan id");
      if (!fs::exists(PathOf(rec->id))) break;
    }
    return SaveNew(rec, now);
  });
}

Status ApprovalStore::CreateOnce(PlanRecord* rec, int64_t now, bool* created) {
  *created = false;
  if (!ValidPlanId(rec->id)) return Status(Errc::kInvalid, "'" + rec->id + "' is not a plan id (32 hex digits)");
  return Locked([&]() -> Status {
    if (fs::exists(PathOf(rec->id))) return Load(rec->id, rec);
    if (Status st = SaveNew(rec, now); !st.ok()) return st;
    *created = true;
    return Status::Ok();
  });
}

Status ApprovalStore::Get(const std::string& id, int64_t now, PlanRecord* out) {
  return Locked([&]() -> Status {
    if (Status st = Load(id, out); !st.ok()) return st;
    if (out->state == "pending" && now >= out->expires) {
      out->state = "expired";
      return Save(*out);
    }
    return Status::Ok();
  });
}

std::vector<PlanRecord> ApprovalStore::List(int64_t now) {
  std::vector<PlanRecord> out;
  // A store that cannot be locked lists nothing (List is for display; Get reports errors).
  (void)Locked([&]() -> Status {
    ForEachRecordLocked([&](PlanRecord& r) {
      if (r.state == "pending" && now >= r.expires) {
        r.state = "expired";
        (void)Save(r);
      }
      out.push_back(std::move(r));
    });
    return Status::Ok();
  });
  std::sort(out.begin(), out.end(), [](const PlanRecord& a, const PlanRecord& b) {
    return a.created != b.created ? a.created > b.created : a.id < b.id;
  });
  return out;
}

Status ApprovalStore::Decide(const std::string& id, const std::string& expected_hash, bool approve,
                             const std::string& approver, const std::string& via, const std::string& reason,
                             int64_t now, PlanRecord* out) {
  return Locked([&]() -> Status {
    if (Status st = Load(id, out); !st.ok()) return st;
    if (out->state == "pending" && now >= out->expires) {
      out->state = "expired";
      if (Status st = Save(*out); !st.ok()) return st;
    }
    if (out->state != "pending")
      return Status(Errc::kConflict, "plan " + id + " is " + out->state +
                                         ", not pending (an approval is single-use; a new request needs a new plan)");
    if (expected_hash != out->hash)
      return Status(Errc::kConflict, "plan " + id + " has hash " + out->hash.substr(0, 16) + ", not the " +
                                         (expected_hash.empty() ? std::string("(none)") : expected_hash.substr(0, 16)) +
                                         " that was shown for approval; approve the plan as it is now");
    out->state = approve ? "approved" : "denied";
    out->approver = approver;
    out->via = via;
    out->reason = reason;
    out->decided = now;
    return Save(*out);
  });
}

Status ApprovalStore::Finish(const std::string& id, const std::string& job_id, const std::string& result,
                             const std::string& error, int64_t now, PlanRecord* out) {
  return Locked([&]() -> Status {
    if (Status st = Load(id, out); !st.ok()) return st;
    if (out->state != "approved") return Status(Errc::kConflict, "plan " + id + " is " + out->state + ", not approved");
    out->state = error.empty() ? "submitted" : "failed";
    out->job_id = job_id;
    out->result = result;
    out->error = error;
    out->finished = now;
    return Save(*out);
  });
}

}  // namespace mt::launch::approval
