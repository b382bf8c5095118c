// Helpers shared by the tools/ unit tests: scratch directories, fixture copies with the
// mtimes the fixture generator intended (a checkout stamps files with the checkout time).
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tools/common/iso_time.h"

namespace mt::tools::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mt-tools-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void SetMtime(const std::filesystem::path& p, int64_t unix_seconds) {
  struct timespec times[2] = {{unix_seconds, 0}, {unix_seconds, 0}};
  utimensat(AT_FDCWD, p.c_str(), times, 0);
}

// name -> ISO time from a fixture generator's mtimes file.
inline std::map<std::string, std::string> ReadMtimes(const std::filesystem::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream f(file);
  std::string name, iso;
  while (f >> name >> iso) out[name] = iso;
  return out;
}

inline int64_t Iso(const std::string& s) { return *ParseIso8601(s); }

}  // namespace mt::tools::testing
