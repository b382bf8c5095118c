#include "tools/perf/perf_artifacts.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <system_error>

#include "base/workspace_files.h"
#include "tools/trace/trace_files.h"

namespace mt::tools {
namespace {

constexpr int kMaxDepth = 8;
constexpr size_t kMaxEntries = 200000;
constexpr uint64_t kMaxHloBytes = 512ull << 20;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// TFRecord framing: u64 length, u32 crc of the length, data, u32 crc of the data. Only
// the 12-byte headers are read.
void CountRecords(const base::FileRoot& root, const std::filesystem::path& p, EventFile* ef) {
  auto f = base::OpenRegularFile(root, p);
  if (!f.ok()) {
    ef->truncated = true;
    return;
  }
  uint64_t off = 0;
  for (;;) {
    unsigned char hdr[12];
    ssize_t got = ::pread(f->fd(), hdr, sizeof hdr, static_cast<off_t>(off));
    if (got <= 0) break;
    if (got < 12) {
      ef->truncated = true;
      break;
    }
    uint64_t len = 0;
    std::memcpy(&len, hdr, 8);   // little-endian on every platform mt runs on
    off += 12;
    if (len > ef->bytes || off + len + 4 > ef->bytes) {
      ef->truncated = true;
      break;
    }
    off += len + 4;
    ++ef->records;
  }
}

}  // namespace

PerfArtifacts FindPerfArtifacts(const std::filesystem::path& job_dir) {
  PerfArtifacts out;
  if (job_dir.empty()) return out;
  auto root = base::FileRoot::Make(job_dir);
  if (!root.ok()) return out;
  std::map<std::string, ProfileRun> runs;
  base::WalkOptions wo;
  wo.max_entries = kMaxEntries;
  wo.max_depth = kMaxDepth;
  wo.follow_symlinks = false;   // `artifact`, `log`: never followed
  auto walked = base::WalkTree(*root, root->path(), wo, [&](const base::WalkEntry& entry) {
    if (entry.type == base::EntryType::kDirectory) {
      const std::string& name = entry.name;
      if (name == "prometheus" || name == "ray_logs" || name == ".coord") return base::Visit::kSkipDir;
      return base::Visit::kContinue;
    }
    if (entry.type != base::EntryType::kRegular) return base::Visit::kContinue;
    const std::string& name = entry.name;
    std::string rel = entry.relative.string();
    uint64_t size = entry.size;
    if (EndsWith(name, ".xplane.pb")) {
      std::string dir = entry.relative.parent_path().string();
      ProfileRun& r = runs[dir];
      r.dir = dir;
      r.files.push_back(name);
      r.bytes += size;
    } else if (trace::LooksLikeTraceName(name)) {
      out.chrome_traces.push_back(rel);
    } else if (EndsWith(name, "after_optimizations.txt") && rel.find("xla_dump") != std::string::npos) {
      HloDump d;
      d.file = rel;
      d.bytes = size;
      if (size <= kMaxHloBytes) {
        try {
          d.collectives = ScanHloCollectives(entry.path);
        } catch (const std::exception& e) {
          out.notes.push_back(e.what());
        }
      } else {
        out.notes.push_back(rel + " is larger than 512 MiB; not parsed");
      }
      out.hlo.push_back(std::move(d));
    } else if (name.rfind("events.out.tfevents.", 0) == 0) {
      EventFile ef;
      ef.file = rel;
      ef.bytes = size;
      CountRecords(*root, entry.path, &ef);
      out.event_files.push_back(std::move(ef));
    }
    return base::Visit::kContinue;
  });
  if (!walked.ok() && walked.code() == base::Errc::kTooMany)
    out.notes.push_back("artifact search stopped after " + std::to_string(kMaxEntries) + " entries");
  for (auto& [_, r] : runs) {
    std::sort(r.files.begin(), r.files.end());
    out.profiles.push_back(std::move(r));
  }
  // The train step's module first, then by name.
  std::sort(out.hlo.begin(), out.hlo.end(), [](const HloDump& a, const HloDump& b) {
    bool ta = a.file.find("train_step") != std::string::npos, tb = b.file.find("train_step") != std::string::npos;
    return ta != tb ? ta : a.file < b.file;
  });
  std::sort(out.chrome_traces.begin(), out.chrome_traces.end());
  std::sort(out.event_files.begin(), out.event_files.end(), [](const EventFile& a, const EventFile& b) { return a.file < b.file; });
  return out;
}

ArtifactsView DescribeArtifacts(const PerfArtifacts& a) {
  ArtifactsView v;
  for (const auto& r : a.profiles) {
    std::vector<std::string> files(r.files.begin(), r.files.begin() + static_cast<long>(std::min<size_t>(r.files.size(), 8)));
    v.xplane_profiles.push_back({r.dir, static_cast<int64_t>(r.files.size()), static_cast<int64_t>(r.bytes), std::move(files)});
  }
  for (const auto& d : a.hlo) {
    if (v.hlo_dumps.size() >= 4) break;
    HloDumpView h{d.file, static_cast<int64_t>(d.bytes), static_cast<int64_t>(d.collectives.instructions), 0, 0, {}};
    for (const auto& [k, c] : d.collectives.kinds) {
      h.by_kind.push_back({k, static_cast<int64_t>(c.count), static_cast<int64_t>(c.async_count),
                           static_cast<int64_t>(c.count - c.async_count), static_cast<int64_t>(c.bytes),
                           static_cast<int64_t>(c.max_bytes)});
      h.collectives += static_cast<int64_t>(c.count);
      h.async_collectives += static_cast<int64_t>(c.async_count);
    }
    v.hlo_dumps.push_back(std::move(h));
  }
  for (const auto& e : a.event_files) {
    if (v.tensorboard_event_files.size() >= 8) break;
    v.tensorboard_event_files.push_back({e.file, static_cast<int64_t>(e.bytes), static_cast<int64_t>(e.records), e.truncated});
  }
  if (a.hlo.size() > 4) v.hlo_dumps_total = static_cast<int64_t>(a.hlo.size());
  if (!a.notes.empty()) v.notes = a.notes;
  return v;
}

}  // namespace mt::tools
