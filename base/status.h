// Typed results for base/ and launcher/: a Status (a code and a message) or a Result<T>
// (a value or a Status). The convention, for every function of those layers:
//
//  - Nothing throws for a condition the file system, a child program or a caller's input can
//    produce (missing file, FIFO, link loop, file too large, I/O error, a malformed plan, a
//    plan that is no longer pending, promtool failing…): the function returns a Status that
//    says which, and callers decide whether it is an error for their user. Only
//    std::bad_alloc escapes.
//  - `message` is one complete clause that names the path (workspace-relative when it is
//    inside the root) or the object and the reason, e.g. "prometheus/01H…/meta.json is a
//    FIFO, not a regular file". Callers prefix it with their context (Status::In), never
//    parse it; they switch on `code`.
//  - A message never contains bytes read from a file: only paths, numbers and errno texts.
//    A file outside the root is never opened, so nothing of it can leak into an answer.
#pragma once
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace mt::base {

enum class Errc {
  kOk = 0,
  kNotFound,     // no such file or directory (or a component is not a directory)
  kNotRegular,   // a FIFO, socket, device or directory where a regular file was needed
  kNotDirectory, // a file where a directory was needed
  kEscapes,      // its real path (after symlinks) is outside the allowed root
  kLoop,         // a symbolic link loop, or a directory reached twice
  kTooLarge,     // over a size cap (the message gives the size and the cap)
  kTooMany,      // over an entry-count cap of a directory walk
  kPermission,   // EACCES / EPERM
  kIo,           // any other system error
  kInvalid,      // a caller error (an empty path, a name with '/', a malformed plan …)
  kConflict,     // the state changed under the caller (a plan no longer pending, a hash
                 // that no longer matches): re-read and decide again
  kFailed,       // a program mt ran (promtool, sbatch, git) or a service it called failed
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Errc::kOk; }
  Errc code() const { return code_; }
  const std::string& message() const { return message_; }
  // The same error with its context in front ("TSDB block X: <message>"); ok stays ok.
  Status In(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Errc code_ = Errc::kOk;
  std::string message_;
};

// A value, or the Status that says why there is none. value() (and * ->) on an error is a
// bug: check ok() first.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {}        // NOLINT: must not be ok()
  Result(Errc code, std::string message) : status_(code, std::move(message)) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  Errc code() const { return status_.code(); }
  const std::string& message() const { return status_.message(); }

  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

// "No such file or directory" for an errno, and the Errc it maps to.
std::string ErrnoText(int err);
Errc ErrcOf(int err);
// "<what>: <errno's text>" with the Errc of an errno value (0 reads as kIo).
Status StatusOfErrno(int err, const std::string& what);
// "<what>: <ec's message>" with the Errc of a std::error_code from <filesystem>.
Status StatusOf(const std::error_code& ec, const std::string& what);

}  // namespace mt::base
