// A test fixture for a store written from exposition: OpenMetrics text (with time stamps)
// turned into Prometheus blocks by the real promtool, served by TsdbManager on one of five
// loopback ports (TestPortBase() + 25..29; the manager takes a free one, so tests sharing
// the range may run at once).
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/tools/query_tsdb/tsdb_fixture.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools::testing {

class ExpositionStoreTest : public ::testing::Test {
 protected:
  // Writes the store; call from SetUp and ASSERT on the result being "".
  std::string MakeStore(const std::string& tag, const std::string& exposition) {
    root_ = TempDir(tag);
    tsdb_ = root_ / "store" / "prometheus";
    std::filesystem::create_directories(tsdb_);
    const std::filesystem::path om = root_ / "store.om";
    std::ofstream(om) << exposition;
    opts_.port_first = TestPortBase() + 25;
    opts_.port_last = opts_.port_first + 4;
    opts_.temp_root = root_;
    const std::string cmd = "promtool tsdb create-blocks-from openmetrics -q '" + om.string() + "' '" + tsdb_.string() +
                            "' > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? "" : "promtool failed on " + om.string();
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }
  std::filesystem::path root_, tsdb_;
  TsdbManagerOptions opts_;
};

}  // namespace mt::tools::testing
