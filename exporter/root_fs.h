// Reading procfs/sysfs through a root prefix, so every collector runs unchanged on
// the real machine (root "/") and on a fixture tree under tests/fixtures/exporter/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mt::exporter {

class RootFs {
 public:
  // `root` is a directory; "/" (or empty) means the real filesystem.
  explicit RootFs(std::string root = "/");

  // Maps an absolute system path such as "/proc/stat" under the root.
  std::string Path(std::string_view system_path) const;

  // Whole small file (procfs/sysfs files are a page or two); nullopt when it cannot be
  // opened or read. Reads with open/read, no iostreams: this runs on every scrape.
  std::optional<std::string> Read(std::string_view system_path) const;

  // Entry names of a directory (no "." / ".."), sorted; empty when absent.
  std::vector<std::string> List(std::string_view system_path) const;

  bool Exists(std::string_view system_path) const;
  bool IsDir(std::string_view system_path) const;

  // Target of a symlink (as stored), or nullopt.
  std::optional<std::string> ReadLink(std::string_view system_path) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;  // without trailing slash; empty for "/"
};

// Reads a file given by its real path (no root mapping).
std::optional<std::string> ReadWholeFile(const std::string& path);

}  // namespace mt::exporter
