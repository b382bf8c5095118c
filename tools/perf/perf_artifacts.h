// Profiling artifacts in a job directory (reference §2.3, §4.3): xplane traces under
// plugins/profile/<ts>/, XLA HLO dumps under xla_dump/, TensorBoard event files. Found by
// a bounded walk of the job directory (symlinks are not followed, so nothing outside the
// job is read) and summarised: the HLO's collectives by kind, the traces by profile run,
// the event files with their record counts.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/perf/hlo_collectives.h"
#include "tools/perf/perf_answer.h"

namespace mt::tools {

struct ProfileRun {
  std::string dir;                     // job-dir-relative plugins/profile/<ts>
  std::vector<std::string> files;      // *.xplane.pb names
  uint64_t bytes = 0;
};

struct HloDump {
  std::string file;                    // job-dir-relative
  uint64_t bytes = 0;
  HloCollectives collectives;
};

struct EventFile {
  std::string file;                    // job-dir-relative
  uint64_t bytes = 0;
  uint64_t records = 0;                // TFRecord frames (the first is the file version)
  bool truncated = false;              // the last frame is incomplete (file still being written)
};

struct PerfArtifacts {
  std::vector<ProfileRun> profiles;
  std::vector<std::string> chrome_traces;   // job-dir-relative *.pt.trace.json[.gz] and alike, sorted
  std::vector<HloDump> hlo;            // *after_optimizations.txt, train step first
  std::vector<EventFile> event_files;
  std::vector<std::string> notes;      // e.g. "walk stopped after N entries"
};

// Walks `job_dir` (depth ≤ 8, ≤ 200,000 entries). HLO files larger than 512 MiB are
// listed but not parsed.
PerfArtifacts FindPerfArtifacts(const std::filesystem::path& job_dir);

// The answer's view: at most 4 HLO dumps (hlo_dumps_total says how many there were), 8
// event files and 8 file names per profile run.
ArtifactsView DescribeArtifacts(const PerfArtifacts& a);

}  // namespace mt::tools
