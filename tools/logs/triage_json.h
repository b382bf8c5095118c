// triage_log's answer, part by part: the JSON encoding of what the triage core computed
// (the fields and their meaning are in docs/tools/triage_log.md and the tool's outputSchema).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "mcp/json.h"
#include "tools/logs/log_scanner.h"
#include "tools/common/tgs_phases.h"
#include "tools/logs/triage_heartbeat.h"
#include "tools/logs/triage_progress.h"
#include "tools/logs/triage_root_cause.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

Json TimeOrNull(int64_t t);
Json Round(double v, int digits = 3);
Json OptRound(const std::optional<double>& v, int digits = 3);
template <typename T>
Json OptOrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json EvidenceJson(const Ev& e);
Json JobJson(const JobFiles& job, const LogScan& log);
// `status` decides which forecasts are meaningful (expected step now, ETA).
Json ProgressJson(const Progress& p, const std::string& status);
Json HangJson(const Progress& p, bool measured_until_end);
Json HeartbeatJson(const std::optional<HeartbeatAnalysis>& hb, bool hang_before_heartbeat);
Json TgsJson(const std::optional<TgsAnalysis>& tgs);
Json InitWavesJson(const LogScan& log, bool full);

}  // namespace mt::tools
