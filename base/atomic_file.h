// Writing a whole file so that readers see the old content or the new, never a part:
// a temp file beside it, then rename(2). For paths the caller owns (the approvals store,
// a job directory being built, the simulator's output); a write into the workspace on
// behalf of a client goes through the confined WriteFileAtomic of base/workspace_files.h.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string_view>

#include "base/status.h"

namespace mt::base {

struct AtomicWriteOptions {
  mode_t mode = 0666;    // before the umask, as fopen(3) creates files
  bool durable = false;  // fsync the file before the rename and the directory after it
};

// Writes `data` to `path` (its directory must exist). On failure the temp file is removed
// and `path` is untouched; the message names the file and the errno text.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view data, const AtomicWriteOptions& options = {});

}  // namespace mt::base
