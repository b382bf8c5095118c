#include "tools/supervise/node_ledger.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>

#include "base/append_file.h"
#include "mcp/json.h"

namespace mt::tools {
namespace {

// A host as node lists write it: letters, digits, '.', '-', '_' (no path, no spaces).
bool PlainHost(const std::string& h) {
  return !h.empty() && h.size() <= 253 &&
         std::all_of(h.begin(), h.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; });
}

Json ToJson(const LedgerEntry& e) {
  Json j = {{"time", e.time}, {"host", e.host}, {"job", e.job}, {"event", e.event}};
  if (!e.cls.empty()) j["class"] = e.cls;
  if (!e.evidence.empty()) j["evidence"] = e.evidence.substr(0, 300);
  if (!e.source.empty()) j["source"] = e.source;
  return j;
}

bool FromJson(const Json& j, LedgerEntry* e) {
  if (!j.is_object() || !j.contains("time") || !j["time"].is_number_integer() || !j.contains("host") ||
      !j["host"].is_string() || !j.contains("event") || !j["event"].is_string())
    return false;
  e->time = j["time"].get<int64_t>();
  e->host = j["host"].get<std::string>();
  e->event = j["event"].get<std::string>();
  if (!PlainHost(e->host) || (e->event != "implicated" && e->event != "clean")) return false;
  e->job = j.value("job", "");
  e->cls = j.value("class", "");
  e->evidence = j.value("evidence", "");
  e->source = j.value("source", "");
  return true;
}

}  // namespace

NodeLedger NodeLedger::ForWorkspace(const std::filesystem::path& workspace) {
  return NodeLedger(workspace / ".mt" / "nodes.jsonl");
}

base::Status NodeLedger::Append(const std::vector<LedgerEntry>& entries) const {
  std::string text;
  for (const auto& e : entries) {
    if (!PlainHost(e.host)) return base::Status(base::Errc::kInvalid, "node ledger: '" + e.host.substr(0, 80) + "' is not a host name");
    if (e.event != "implicated" && e.event != "clean")
      return base::Status(base::Errc::kInvalid, "node ledger: event must be implicated or clean, got '" + e.event + "'");
    text += ToJson(e).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  }
  if (text.empty()) return base::Status::Ok();
  return base::AppendLocked(file_, text, "node ledger");
}

base::Status NodeLedger::Read(std::vector<LedgerEntry>* out, int* skipped) const {
  out->clear();
  if (skipped) *skipped = 0;
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) return base::Status::Ok();   // no implication yet
  std::ifstream in(file_, std::ios::binary);
  if (!in) return base::Status(base::Errc::kIo, "cannot read the node ledger " + file_.string());
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    LedgerEntry e;
    const Json j = Json::parse(line, nullptr, false);
    if (FromJson(j, &e)) out->push_back(std::move(e));
    else if (skipped) ++*skipped;
  }
  return base::Status::Ok();
}

std::vector<NodeStanding> StandingsOf(std::vector<LedgerEntry> entries, const OffenderRule& rule, int64_t now) {
  std::stable_sort(entries.begin(), entries.end(), [](const LedgerEntry& a, const LedgerEntry& b) { return a.time < b.time; });
  std::map<std::string, NodeStanding> by_host;
  for (const auto& e : entries) {
    NodeStanding& s = by_host[e.host];
    s.host = e.host;
    if (e.event == "clean") {
      s.implications = 0;   // a clean job on the host releases it
      continue;
    }
    if (e.time < now - rule.window_s || e.time > now) continue;
    ++s.implications;
    s.last_time = e.time;
    s.last_class = e.cls;
    s.last_job = e.job;
  }
  std::vector<NodeStanding> out;
  for (auto& [host, s] : by_host) {
    if (s.last_time == 0 && s.implications == 0) continue;   // only clean jobs, or implications outside the window
    s.excluded = s.implications >= rule.k;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const NodeStanding& a, const NodeStanding& b) {
    return a.implications != b.implications ? a.implications > b.implications : a.last_time > b.last_time;
  });
  return out;
}

base::Status NodeLedger::Standings(const OffenderRule& rule, int64_t now, std::vector<NodeStanding>* out) const {
  std::vector<LedgerEntry> entries;
  if (base::Status st = Read(&entries); !st.ok()) return st;
  *out = StandingsOf(std::move(entries), rule, now);
  return base::Status::Ok();
}

base::Status NodeLedger::Excluded(const OffenderRule& rule, int64_t now, std::vector<std::string>* out) const {
  std::vector<NodeStanding> standings;
  if (base::Status st = Standings(rule, now, &standings); !st.ok()) return st;
  out->clear();
  for (const auto& s : standings)
    if (s.excluded) out->push_back(s.host);
  std::sort(out->begin(), out->end());
  return base::Status::Ok();
}

}  // namespace mt::tools
