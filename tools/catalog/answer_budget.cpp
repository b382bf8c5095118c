#include "tools/catalog/answer_budget.h"

namespace mt::tools {

AnswerBudget::AnswerBudget(Json& out, size_t max_tokens) : out_(out), max_tokens_(max_tokens), over_at_start_(over()) {}

void AnswerBudget::Cap(Json& array, size_t n, const std::string& what) {
  if (array.is_array() && array.size() > n && over()) {
    array.erase(array.begin() + static_cast<std::ptrdiff_t>(n), array.end());
    dropped_.push_back(what);
  }
}

void AnswerBudget::Finish(const std::string& how) {
  if (!over_at_start_) return;
  out_["truncated"] = true;
  std::string msg = "to stay within " + std::to_string(max_tokens_) + " tokens: dropped ";
  for (size_t i = 0; i < dropped_.size(); ++i) msg += (i ? ", " : "") + dropped_[i];
  out_["omitted"] = msg + "; " + how;
}

}  // namespace mt::tools
