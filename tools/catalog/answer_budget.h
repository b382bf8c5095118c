// Keeps a tool's structured answer within a token budget (about 4 bytes of JSON per token).
// Each tool drops detail in its own order of importance; the budget does the measuring and
// writes `truncated` and `omitted` (what went, and how to get it) into the answer.
#pragma once
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::tools {

class AnswerBudget {
 public:
  AnswerBudget(Json& out, size_t max_tokens);

  bool over() const { return out_.dump().size() / 4 > max_tokens_; }
  bool over_at_start() const { return over_at_start_; }

  // While over budget, keeps only the first `n` elements of `array` and records `what`.
  void Cap(Json& array, size_t n, const std::string& what);
  // Records something the tool dropped by itself.
  void Dropped(std::string what) { dropped_.push_back(std::move(what)); }
  // When the answer started over budget: sets truncated and omitted ("…; <how>").
  void Finish(const std::string& how = "call again with detail: full for the rest");

 private:
  Json& out_;
  size_t max_tokens_;
  bool over_at_start_;
  std::vector<std::string> dropped_;
};

}  // namespace mt::tools
