// Running programs without a shell: argv in, exit status and captured output out.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace mt::launch {

struct ProcessResult {
  int status = -1;       // exit code; 128+N when killed by signal N; -1 when it could not start
  std::string out, err;  // captured stdout / stderr
  std::string error;     // why it could not start (empty when it ran)
};

// fork + execvp(argv); `env` entries are added to (or replace) the inherited environment.
// A timeout > 0 kills the child (SIGKILL) after that many seconds and reports status 124.
ProcessResult RunCapture(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
                         double timeout_s = 0);

// The absolute path of `name` on PATH (or `name` itself when it contains a '/' and is
// executable); "" when not found.
std::string FindOnPath(const std::string& name);

// A launcher binary: $ENV_VAR, else beside the running executable, else in the build
// tree's sibling folders (../launcher, ../exporter), else PATH. "" when not found.
std::string FindLauncherBinary(const std::string& name, const char* env_var);

// The running executable's directory.
std::string SelfDir();

}  // namespace mt::launch
