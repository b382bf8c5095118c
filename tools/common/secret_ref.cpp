#include "tools/common/secret_ref.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace mt::tools {
namespace {
constexpr std::size_t kMaxSecretBytes = 16 * 1024;
}  // namespace

std::string SecretOrigins(const SecretRef& r) {
  const int n = !r.env.empty() + !r.file.empty() + !r.value.empty();
  return n > 1 ? "give one of env, file or value, not " + std::to_string(n) : "";
}

std::string ReadSecret(const SecretRef& r, const std::string& where) {
  if (!r.value.empty()) return r.value;
  if (!r.env.empty()) {
    const char* v = std::getenv(r.env.c_str());
    if (v == nullptr || *v == '\0') throw std::runtime_error(where + ": environment variable " + r.env + " is not set");
    return v;
  }
  std::ifstream in(r.file, std::ios::binary);
  if (!in) throw std::runtime_error(where + ": cannot read " + r.file.string());
  std::string text(kMaxSecretBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxSecretBytes) throw std::runtime_error(where + ": " + r.file.string() + " is larger than 16 KiB");
  if (auto nl = text.find_first_of("\r\n"); nl != std::string::npos) text.resize(nl);
  if (text.empty()) throw std::runtime_error(where + ": " + r.file.string() + " is empty");
  return text;
}

}  // namespace mt::tools
