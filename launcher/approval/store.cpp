#include "launcher/approval/store.h"

#include "base/atomic_file.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Writes `data` to `path` atomically and durably (fsync of the file, rename, fsync of the
// directory), readable by its owner only.
std::string WriteAtomic(const fs::path& path, const std::string& data) {
  const base::Status st = base::WriteFileAtomic(path, data, {.mode = 0600, .durable = true});
  return st.ok() ? "" : st.message();
}

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

std::string PlanRecord::FromJson(const json& j, PlanRecord* r) {
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
    return std::string("malformed approval record: ") + e.what();
  }
  return "";
}

ApprovalStore::ApprovalStore(fs::path dir, std::chrono::seconds ttl) : dir_(std::move(dir)), ttl_(ttl) {}

std::string ApprovalStore::Locked(const std::function<std::string()>& fn) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return "cannot create approvals directory " + dir_.string() + ": " + ec.message();
  const fs::path lock = dir_ / ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("cannot open " + lock.string());
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      std::string e = Errno("cannot lock " + lock.string());
      ::close(fd);
      return e;
    }
  }
  std::string err;
  try {
    err = fn();
  } catch (const std::exception& e) {
    err = e.what();
  }
  ::close(fd);
  return err;
}

std::string ApprovalStore::Load(const std::string& id, PlanRecord* out) const {
  if (!ValidPlanId(id)) return "no such plan '" + id + "' (a plan id is 32 hex digits)";
  std::ifstream in(PathOf(id));
  if (!in) return "no such plan " + id;
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return "approval record " + id + " is not valid JSON";
  if (auto e = PlanRecord::FromJson(j, out); !e.empty()) return e;
  if (out->id != id) return "approval record " + id + " names another plan (" + out->id + ")";
  return "";
}

void ApprovalStore::ForEachRecordLocked(const std::function<void(PlanRecord&)>& fn) const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() != 37 || e.path().extension() != ".json") continue;
    PlanRecord r;
    if (Load(name.substr(0, 32), &r).empty()) fn(r);
  }
}

std::string ApprovalStore::Save(const PlanRecord& rec) const { return WriteAtomic(PathOf(rec.id), rec.ToJson().dump(1) + "\n"); }

std::string ApprovalStore::Create(PlanRecord* rec, int64_t now, std::size_t max_pending_per_requester) {
  return Locked([&]() -> std::string {
    if (max_pending_per_requester > 0) {
      // Counted under the lock, so a burst of parallel requests cannot slip past the cap.
      std::size_t pending = 0;
      ForEachRecordLocked([&](PlanRecord& r) {
        pending += r.state == "pending" && now < r.expires && r.requester == rec->requester;
      });
      if (pending >= max_pending_per_requester)
        return rec->requester + " already has " + std::to_string(pending) +
               " plans waiting for approval (the limit is " + std::to_string(max_pending_per_requester) +
               "); wait until a human decides them or they expire, then ask again";
    }
    for (int attempt = 0; attempt < 4; ++attempt) {
      rec->id = RandomId();
      if (rec->id.empty()) return "no randomness for a plan id";
      if (!fs::exists(PathOf(rec->id))) break;
    }
    rec->state = "pending";
    rec->created = now;
    rec->expires = now + ttl_.count();
    rec->approver.clear();
    rec->via.clear();
    rec->decided = rec->finished = 0;
    return Save(*rec);
  });
}

std::string ApprovalStore::Get(const std::string& id, int64_t now, PlanRecord* out) {
  return Locked([&]() -> std::string {
    if (auto e = Load(id, out); !e.empty()) return e;
    if (out->state == "pending" && now >= out->expires) {
      out->state = "expired";
      return Save(*out);
    }
    return "";
  });
}

std::vector<PlanRecord> ApprovalStore::List(int64_t now) {
  std::vector<PlanRecord> out;
  Locked([&]() -> std::string {
    ForEachRecordLocked([&](PlanRecord& r) {
      if (r.state == "pending" && now >= r.expires) {
        r.state = "expired";
        (void)Save(r);
      }
      out.push_back(std::move(r));
    });
    return "";
  });
  std::sort(out.begin(), out.end(), [](const PlanRecord& a, const PlanRecord& b) {
    return a.created != b.created ? a.created > b.created : a.id < b.id;
  });
  return out;
}

std::string ApprovalStore::Decide(const std::string& id, const std::string& expected_hash, bool approve,
                                  const std::string& approver, const std::string& via, const std::string& reason,
                                  int64_t now, PlanRecord* out) {
  return Locked([&]() -> std::string {
    if (auto e = Load(id, out); !e.empty()) return e;
    if (out->state == "pending" && now >= out->expires) {
      out->state = "expired";
      if (auto e = Save(*out); !e.empty()) return e;
    }
    if (out->state != "pending")
      return "plan " + id + " is " + out->state + ", not pending (an approval is single-use; a new request needs a new plan)";
    if (expected_hash != out->hash)
      return "plan " + id + " has hash " + out->hash.substr(0, 16) + ", not the " +
             (expected_hash.empty() ? std::string("(none)") : expected_hash.substr(0, 16)) +
             " that was shown for approval; approve the plan as it is now";
    out->state = approve ? "approved" : "denied";
    out->approver = approver;
    out->via = via;
    out->reason = reason;
    out->decided = now;
    return Save(*out);
  });
}

std::string ApprovalStore::Finish(const std::string& id, const std::string& job_id, const std::string& result,
                                  const std::string& error, int64_t now, PlanRecord* out) {
  return Locked([&]() -> std::string {
    if (auto e = Load(id, out); !e.empty()) return e;
    if (out->state != "approved") return "plan " + id + " is " + out->state + ", not approved";
    out->state = error.empty() ? "submitted" : "failed";
    out->job_id = job_id;
    out->result = result;
    out->error = error;
    out->finished = now;
    return Save(*out);
  });
}

}  // namespace mt::launch::approval
