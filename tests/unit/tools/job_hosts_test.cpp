// A job's hosts from its own output and the scheduler (tools/logs/job_hosts.h), on real log
// lines: NCCL prefixes behind mpirun's "[1,4]<stdout>:" (horovod/horovod#3658) and a WARN
// with its source location (NVIDIA/nccl#857), Slurm node lists as sbatch scripts echo them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "tools/logs/job_hosts.h"

namespace mt::tools {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

TEST(JobHosts, NodelistLinesAreExpanded) {
  EXPECT_THAT(NodelistInText("x\nSLURM_JOB_NODELIST=mi250-[03-04]\n"), ElementsAre("mi250-03", "mi250-04"));
  EXPECT_THAT(NodelistInText("export SLURM_NODELIST=\"gpu[1,3]\"\n"), ElementsAre("gpu1", "gpu3"));
  EXPECT_THAT(NodelistInText("JOB_NODELIST=n447\n"), ElementsAre("n447"));
  EXPECT_THAT(NodelistInText("0: SLURM_JOB_NODELIST=gpu-[07-08]\n"), ElementsAre("gpu-07", "gpu-08"));   // srun -l
  EXPECT_THAT(NodelistInText("echo SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST\n"), IsEmpty());   // the script, not its output
  EXPECT_THAT(NodelistInText("MY_SLURM_JOB_NODELIST=x1\n"), IsEmpty());
  EXPECT_THAT(NodelistInText("echo the nodes are in SLURM_JOB_NODELIST\n"), IsEmpty());
}

TEST(JobHosts, NcclPrefixesNameTheHostsBehindAnyLauncherPrefix) {
  const std::string horovod =   // https://github.com/horovod/horovod/issues/3658
      "[1,4]<stdout>:ip-172-31-12-129:1759:1773 [0] NCCL INFO Channel 00 : 0[1b0] -> 4[1b0] [receive] via NET/Socket/0\n"
      "[1,1]<stdout>:ip-172-31-0-63:2121:2136 [1] NCCL INFO NET/Socket: Using 2 threads and 8 sockets per thread\n"
      "[1,4]<stdout>:ip-172-31-12-129:1759:1773 [0] NCCL INFO NET/Socket: Using 2 threads and 8 sockets per thread\n";
  EXPECT_THAT(HostsInNcclPrefixes(horovod), ElementsAre("ip-172-31-0-63", "ip-172-31-12-129"));
  const std::string warn =   // https://github.com/NVIDIA/nccl/issues/857
      "ai:480850:480850 [0] NCCL INFO Bootstrap : Using eth0:162.30.2.40<0>\n"
      "ai:480850:480850 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n";
  EXPECT_THAT(HostsInNcclPrefixes(warn), ElementsAre("ai"));
  // Not a prefix: a time stamp, or NCCL mentioned in passing.
  EXPECT_THAT(HostsInNcclPrefixes("2024-01-02 12:34:56 [0] NCCL INFO x\nNCCL INFO without a prefix\n"), IsEmpty());
}

class JobHostsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mt-job-hosts-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    SetScheduler(nullptr);
    fs::remove_all(dir_);
  }
  JobFiles Job(const std::string& text) {
    JobFiles j;
    j.id = "102";
    j.log = dir_ / "slurm-102.out";
    std::ofstream(j.log) << text;
    return j;
  }
  // Each call its own scheduler answer, as each query_tsdb call has.
  static JobHosts Find(const JobFiles& j) {
    SchedulerAnswer scheduler(j);
    return FindJobHosts(j, scheduler);
  }
  fs::path dir_;
};

TEST_F(JobHostsFiles, LogNodelistThenSchedulerThenNcclLines) {
  const std::string nccl = "node7:4242:4250 [0] NCCL INFO Bootstrap\nnode8:4243:4251 [0] NCCL INFO Bootstrap\n";
  SetScheduler([](const std::string& id) {
    return id == "102" ? SchedulerJob{{"node9", "node7", "node8"}, 1.7e9, std::nullopt, "slurm: scontrol show job"}
                       : SchedulerJob{};
  });
  JobHosts h = Find(Job("SLURM_JOB_NODELIST=node[1-2]\n" + nccl));
  EXPECT_THAT(h.hosts, ElementsAre("node1", "node2"));
  EXPECT_EQ(h.found_by, "job log: its Slurm node list");
  h = Find(Job(nccl));
  EXPECT_THAT(h.hosts, ElementsAre("node7", "node8", "node9"));
  EXPECT_EQ(h.found_by, "slurm: scontrol show job");
  SetScheduler(nullptr);
  h = Find(Job(nccl));
  EXPECT_THAT(h.hosts, ElementsAre("node7", "node8"));
  EXPECT_EQ(h.found_by, "job log: host names of its NCCL/RCCL lines");
  h = Find(Job("step 1 loss 2.0\n"));
  EXPECT_THAT(h.hosts, IsEmpty());
  EXPECT_EQ(h.found_by, "");
}

TEST_F(JobHostsFiles, TheSchedulerIsAskedOnlyWhenNeededAndOnce) {
  int asked = 0;
  SetScheduler([&asked](const std::string&) {
    ++asked;
    return SchedulerJob{{"node1"}, 1.7e9, std::nullopt, "slurm: sacct"};
  });
  const JobFiles listed = Job("SLURM_JOB_NODELIST=node[1-2]\n");
  SchedulerAnswer a(listed);
  EXPECT_THAT(FindJobHosts(listed, a).hosts, ElementsAre("node1", "node2"));
  EXPECT_EQ(asked, 0);   // the log names the nodes
  const JobFiles bare = Job("step 1\n");
  SchedulerAnswer b(bare);
  EXPECT_THAT(FindJobHosts(bare, b).hosts, ElementsAre("node1"));
  EXPECT_EQ(b.Get().start, 1.7e9);   // the window's question, answered by the same ask
  EXPECT_EQ(asked, 1);
}

TEST_F(JobHostsFiles, AMissingOrSpecialLogGivesNoHosts) {
  JobFiles j;
  j.log = dir_ / "absent.out";
  EXPECT_THAT(Find(j).hosts, IsEmpty());
  j.log = dir_ / "fifo.out";
  ASSERT_EQ(::mkfifo(j.log.c_str(), 0600), 0);
  EXPECT_THAT(Find(j).hosts, IsEmpty());   // never opened for reading: no hang
}

}  // namespace
}  // namespace mt::tools
