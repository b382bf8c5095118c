// A job placed on a shared store by the labels its GPU exporters attach: dcgm-exporter's
// hpc_job (HPC job mapping) and AMD device-metrics-exporter's job_id. A real Prometheus over
// blocks written by the real promtool: the job's hosts and its first and last labelled
// sample, with two metrics per GPU (a function of the bare selector would fail on their
// shared label sets) and other jobs' labels beside it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/tools/query_tsdb/exposition_store.h"
#include "tools/shared_store/job_labels.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr long kT0 = testing::kStart, kT1 = testing::kStart + 4 * 3600;
// Job 4242 runs from 1 h 10 min to 2 h 40 min on dcgm hosts nv-01, nv-02 and AMD host
// mi-01 (unprefixed names, `job_id`); job 4243 runs on nv-03 all the time; mi-02 idles.
constexpr long kJobStart = kT0 + 4200, kJobEnd = kT0 + 9600;

std::string Exposition() {
  std::string o;
  for (const char* name : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"}) {
    o += std::string("# TYPE ") + name + " gauge\n";
    for (long t = kT0; t <= kT1; t += 30)
      for (const char* h : {"nv-01", "nv-02", "nv-03"})
        for (int g = 0; g < 2; ++g) {
          const std::string host = h;
          std::string job;
          if (host == "nv-03") job = ",hpc_job=\"4243\"";
          else if (t >= kJobStart && t <= kJobEnd) job = ",hpc_job=\"4242\"";
          o += std::string(name) + "{gpu=\"" + std::to_string(g) + "\",Hostname=\"" + host + "\",instance=\"10.0.0.9:9400\"" +
               job + "} 60 " + std::to_string(t) + "\n";
        }
  }
  for (const char* name : {"gpu_junction_temperature", "gpu_package_power"}) {
    o += std::string("# TYPE ") + name + " gauge\n";
    for (long t = kT0; t <= kT1; t += 30)
      for (const char* h : {"mi-01", "mi-02"}) {
        const std::string job = std::string(h) == "mi-01" && t >= kJobStart && t <= kJobEnd ? ",job_id=\"4242\"" : "";
        o += std::string(name) + "{gpu_id=\"0\",hostname=\"" + h + "\"" + job + "} 50 " + std::to_string(t) + "\n";
      }
  }
  return o + "# EOF\n";
}

class JobLabelsTest : public testing::ExpositionStoreTest {
 protected:
  void SetUp() override { ASSERT_EQ(MakeStore("joblabels", Exposition()), ""); }
};

TEST(JobLabelSelector, TakesOnlyIdsALabelCanHold) {
  EXPECT_NE(JobLabelSelector("4242"), "");
  EXPECT_NE(JobLabelSelector("4242_7"), "");   // an array task
  EXPECT_EQ(JobLabelSelector(""), "");
  EXPECT_EQ(JobLabelSelector("42\"} or up{x=\""), "");
  EXPECT_EQ(JobLabelSelector("4242|.*"), "");
}

TEST_F(JobLabelsTest, TheJobsHostsAndWindowComeFromItsLabelledSamples) {
  TsdbManager manager(opts_);
  TsdbLease lease = manager.Acquire({tsdb_, false, std::nullopt});
  PrometheusClient client(lease.url());

  auto w = WindowFromJobLabels(client, "4242", kT1, 4 * 3600.0);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->start, kJobStart, 1);
  EXPECT_NEAR(w->end, kJobEnd, 1);   // the newest sample's own time, whatever the lookback

  TsdbContext ctx(client, *w, nullptr);
  EXPECT_THAT(HostsFromJobLabels(ctx, "4242"), ElementsAre("mi-01", "nv-01", "nv-02"));
  EXPECT_THAT(HostsFromJobLabels(ctx, "4243"), ElementsAre("nv-03"));

  EXPECT_FALSE(WindowFromJobLabels(client, "4244", kT1, 4 * 3600.0).has_value());
  EXPECT_THAT(HostsFromJobLabels(ctx, "4244"), IsEmpty());
  // Searched only over the lookback: the job ended before it
  EXPECT_FALSE(WindowFromJobLabels(client, "4242", kT1, 3600.0).has_value());
}

}  // namespace
}  // namespace mt::tools
