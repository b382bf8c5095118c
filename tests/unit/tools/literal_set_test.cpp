#include "tools/logs/literal_set.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace mt::tools {
namespace {

TEST(LiteralSet, FindsEveryLiteralAtItsOffset) {
  LiteralSet set({"completed step:", "RESOURCE_EXHAUSTED", "NODE_EXIT host="});
  std::string text = "noise noise\n0: completed step: 4, seconds: 1\nxx RESOURCE_EXHAUSTED yy NODE_EXIT host=a";
  LiteralSet::Hit hit;
  ASSERT_TRUE(set.FindFirst(text.data(), text.size(), 0, &hit));
  EXPECT_EQ(hit.id, 0);
  EXPECT_EQ(hit.pos, text.find("completed step:"));
  ASSERT_TRUE(set.FindFirst(text.data(), text.size(), hit.pos + 1, &hit));
  EXPECT_EQ(hit.id, 1);
  EXPECT_EQ(hit.pos, text.find("RESOURCE_EXHAUSTED"));
  ASSERT_TRUE(set.FindFirst(text.data(), text.size(), hit.pos + 1, &hit));
  EXPECT_EQ(hit.id, 2);
  EXPECT_FALSE(set.FindFirst(text.data(), text.size(), hit.pos + 1, &hit));
}

TEST(LiteralSet, AgreesWithNaiveSearchOnRandomText) {
  std::vector<std::string> lits = {"abcab", "bca", "cabbage", "aaaa", "cab"};
  LiteralSet set(lits);
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    int n = static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) text.push_back("abcg"[rng() % 4]);
    size_t from = 0;
    LiteralSet::Hit hit;
    while (true) {
      // Naive: smallest start >= from where any literal matches.
      size_t best = std::string::npos;
      for (size_t p = from; p < text.size() && best == std::string::npos; ++p)
        for (const auto& l : lits)
          if (text.compare(p, l.size(), l) == 0) best = p;
      bool found = set.FindFirst(text.data(), text.size(), from, &hit);
      ASSERT_EQ(found, best != std::string::npos) << text;
      if (!found) break;
      ASSERT_EQ(hit.pos, best) << text;
      ASSERT_EQ(text.compare(hit.pos, lits[hit.id].size(), lits[hit.id]), 0);
      from = hit.pos + 1;
    }
  }
}

TEST(LiteralSet, FindAllReportsEachLiteralOnce) {
  LiteralSet set({"NCCL error", "NCCL WARN Timeout", "Timeout waiting for"});
  std::string line = "x NCCL WARN Timeout NCCL error NCCL error Timeout waiting for y";
  std::vector<int> ids;
  set.FindAll(line.data(), line.size(), &ids);
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 2}));
}

TEST(LiteralSet, RejectsLiteralsTooShortToIndex) {
  EXPECT_THROW(LiteralSet({"ab"}), std::invalid_argument);
  EXPECT_THROW(LiteralSet(std::vector<std::string>{}), std::invalid_argument);
}

}  // namespace
}  // namespace mt::tools
