#include <gtest/gtest.h>

#include <chrono>

#include "launcher/sim/realtime.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch::sim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRun = R"(
job:
  id: "5001"
  model: llama2-70b
  hosts: "node[001-002]"
  gpus_per_node: 2
  start: "2026-01-01T00:00:00Z"
training:
  steps: 20
  per_device_batch_size: 1
  max_target_length: 4096
  tgs: 400
  checkpoint_period: 10
hardware:
  nics: 2
faults:
  - kind: thread_leak
    extra_procs: 17
)";

TEST(Realtime, WritesLogEventsAndFakeRootOnTheWallClock) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(kRun, "", &s, &err)) << err;
  test::ScratchDir dir;
  RealtimeOptions o;
  o.step_seconds = 0.02;
  o.startup_seconds = 0.1;
  o.root_interval = 0.05;
  o.log_path = dir.path() / "job.log";
  o.out_dir = dir.path() / "out";
  o.fake_root = dir.path() / "root";
  const double t0 = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_EQ(RunRealtime(s, o, &err), 0) << err;
  const double t1 = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  const std::string log = test::ReadAll(o.log_path);
  EXPECT_EQ(log.rfind("JOB_ID=5001\n", 0), 0u);
  EXPECT_NE(log.find("0: completed step: 19,"), std::string::npos);
  EXPECT_NE(log.find("1: completed step: 19,"), std::string::npos);
  EXPECT_NE(log.find("Status: \033[32mSUCCESS (exit 0)"), std::string::npos);

  fs::path event_file;
  for (const auto& e : fs::recursive_directory_iterator(o.out_dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) event_file = e.path();
  ASSERT_FALSE(event_file.empty());
  EXPECT_EQ(event_file.parent_path(), o.out_dir / "llama2-70b_5001" / "tensorboard" / "llama2-70b_5001");
  std::vector<test::DecodedEvent> events;
  ASSERT_TRUE(test::DecodeEventFile(test::ReadAll(event_file), &events, &err)) << err;
  ASSERT_EQ(events.size(), 1u + 20 * 11);  // file_version + 11 scalars per step (no MoE)
  double prev = 0;
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(events[i].wall_time, prev);
    EXPECT_GE(events[i].wall_time, t0 - 1);
    EXPECT_LE(events[i].wall_time, t1 + 1);  // real wall-clock time, not the scenario's
    prev = events[i].wall_time;
  }
  EXPECT_EQ(events.back().step, 19);

  const fs::path n1 = o.fake_root / "node001";
  EXPECT_EQ(test::ReadAll(n1 / "sys/class/hwmon/hwmon2/name"), "amdgpu\n");
  EXPECT_EQ(fs::read_symlink(n1 / "sys/class/hwmon/hwmon2/device"), "../../../0000:05:00.0");
  EXPECT_TRUE(fs::is_regular_file(n1 / "sys/class/hwmon/hwmon3/device/mem_info_vram_total"));
  EXPECT_TRUE(fs::is_regular_file(n1 / "sys/bus/pci/drivers/amdgpu/0000:15:00.0/ras/aca_umc"));
  EXPECT_EQ(test::ReadAll(n1 / "sys/class/infiniband/ionic_1/ports/1/state"), "4: ACTIVE\n");
  EXPECT_TRUE(fs::is_regular_file(n1 / "sys/class/infiniband/ionic_1/ports/1/hw_counters/tx_rdma_retx_pkts"));
  const std::string stat = test::ReadAll(n1 / "proc/stat");
  EXPECT_NE(stat.find("\nctxt "), std::string::npos);
  EXPECT_NE(stat.find("\nprocs_running "), std::string::npos);
  EXPECT_NE(test::ReadAll(n1 / "proc/net/snmp").find("RetransSegs"), std::string::npos);
  EXPECT_NE(test::ReadAll(n1 / "proc/pressure/io").find("full avg10="), std::string::npos);
  EXPECT_TRUE(fs::is_directory(o.fake_root / "node002" / "proc"));
}

TEST(Realtime, HangRunsUntilStoppedAndPowerDropsToBusyWait) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(std::string(kRun) + "  - kind: hang\n    step: 5\n", "", &s, &err)) << err;
  test::ScratchDir dir;
  RealtimeOptions o;
  o.step_seconds = 0.02;
  o.startup_seconds = 0.05;
  o.root_interval = 0.05;
  o.max_seconds = 1.0;
  o.log_path = dir.path() / "job.log";
  o.fake_root = dir.path() / "root";
  EXPECT_EQ(RunRealtime(s, o, &err), 143) << err;  // stopped like a cancelled task
  const std::string log = test::ReadAll(o.log_path);
  EXPECT_NE(log.find("completed step: 5,"), std::string::npos);
  EXPECT_EQ(log.find("completed step: 6,"), std::string::npos);
  EXPECT_EQ(log.find("JOB SUMMARY"), std::string::npos);
  const double watts = std::stod(test::ReadAll(o.fake_root / "node001/sys/class/hwmon/hwmon2/power1_input")) / 1e6;
  EXPECT_NEAR(watts, 300, 15);
}

TEST(Realtime, RejectsBadOptions) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(kRun, "", &s, &err)) << err;
  RealtimeOptions o;
  o.rank = 5;
  EXPECT_EQ(RunRealtime(s, o, &err), -1);
  EXPECT_NE(err.find("--rank"), std::string::npos);
  o.rank = -1;
  o.log_path = "/nonexistent-dir/job.log";
  EXPECT_EQ(RunRealtime(s, o, &err), -1);
  EXPECT_NE(err.find("cannot create"), std::string::npos);
}

}  // namespace
}  // namespace mt::launch::sim
