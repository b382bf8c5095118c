// A scratch directory removed at the end of the test.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace mt::exporter::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("mt-exporter-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

  // Writes (or appends) `text` to a file below the directory, creating parents.
  std::string Write(const std::string& rel, const std::string& text, bool append = false) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream f(p, append ? std::ios::app | std::ios::binary : std::ios::trunc | std::ios::binary);
    f << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace mt::exporter::testing
