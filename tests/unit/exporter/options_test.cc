#include <gtest/gtest.h>

#include <vector>

#include "exporter/options.h"

namespace mt::exporter {
namespace {

ParseResult Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "mt-exporter");
  return ParseOptions(static_cast<int>(args.size()), args.data());
}

TEST(ExporterOptions, DefaultsMatchTheOriginalExporterExceptTheListenAddress) {
  auto r = Parse({});
  ASSERT_TRUE(r.error.empty());
  // Issue #14: loopback unless asked (the unit and the launcher pass --listen).
  EXPECT_EQ(r.options.listen, "127.0.0.1:9400");
  EXPECT_NE(Usage().find("--listen ADDR          address to serve /metrics on (default 127.0.0.1:9400"), std::string::npos);
  EXPECT_EQ(r.options.plugin_max_bytes, 1048576u);
  EXPECT_EQ(r.options.plugin_max_series, 10000u);
  EXPECT_EQ(r.options.plugin_max_stderr, 4096u);
  EXPECT_EQ(r.options.log_max_bytes, 16u << 20);
  EXPECT_EQ(r.options.interval_seconds, 10);
  EXPECT_EQ(r.options.root, "/");
  EXPECT_FALSE(r.options.host.empty());
  EXPECT_EQ(r.options.host.find('.'), std::string::npos);
}

TEST(ExporterOptions, ParsesEveryFlagInBothSpellings) {
  auto r = Parse({"--listen", "127.0.0.1:19400", "--interval=2.5", "--host", "n1", "--plugin-dir", "/a",
                  "--plugin-dir=/b", "--root", "/fx", "--job-dir", "/j", "--tfevents", "/t", "--job-log", "/l",
                  "--tfevents-since", "0", "--nvidia", "smi", "--nvidia-smi", "/x/nvidia-smi",
                  "--no-collector", "kmsg", "--log", "/tmp/e.log", "--log-max-bytes", "0",
                  "--plugin-max-bytes=2048", "--plugin-max-series", "7", "--plugin-max-stderr", "0"});
  ASSERT_TRUE(r.error.empty()) << r.error;
  const Options& o = r.options;
  EXPECT_EQ(o.listen, "127.0.0.1:19400");
  EXPECT_EQ(o.interval_seconds, 2.5);
  EXPECT_EQ(o.host, "n1");
  EXPECT_EQ(o.plugin_dirs, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(o.root, "/fx");
  EXPECT_EQ(o.job_dir, "/j");
  EXPECT_EQ(o.tfevents, "/t");
  EXPECT_EQ(o.job_log, "/l");
  EXPECT_EQ(o.tfevents_since, 0.0);
  EXPECT_EQ(o.nvidia, "smi");
  EXPECT_EQ(o.nvidia_smi, "/x/nvidia-smi");
  EXPECT_EQ(o.disabled_collectors, (std::vector<std::string>{"kmsg"}));
  EXPECT_EQ(o.log_file, "/tmp/e.log");
  EXPECT_EQ(o.log_max_bytes, 0u);
  EXPECT_EQ(o.plugin_max_bytes, 2048u);
  EXPECT_EQ(o.plugin_max_series, 7u);
  EXPECT_EQ(o.plugin_max_stderr, 0u);
}

TEST(ExporterOptions, UsageErrorsAreSpecific) {
  EXPECT_NE(Parse({"--bogus"}).error.find("unknown flag '--bogus'"), std::string::npos);
  EXPECT_NE(Parse({"--interval"}).error.find("needs a value"), std::string::npos);
  EXPECT_NE(Parse({"--interval", "0"}).error.find("[0.1, 3600]"), std::string::npos);
  EXPECT_NE(Parse({"--interval", "abc"}).error.find("abc"), std::string::npos);
  EXPECT_NE(Parse({"--nvidia", "cuda"}).error.find("auto, smi or off"), std::string::npos);
  EXPECT_NE(Parse({"--no-collector", "cpu"}).error.find("unknown collector 'cpu'"), std::string::npos);
  EXPECT_NE(Parse({"--host="}).error.find("non-empty"), std::string::npos);
  EXPECT_NE(Parse({"--listen", "9400"}).error.find("--listen: expected HOST:PORT"), std::string::npos);
  EXPECT_NE(Parse({"--listen", "::1:9400"}).error.find("brackets"), std::string::npos);
  EXPECT_TRUE(Parse({"--listen", "[::]:9400"}).error.empty());
  EXPECT_NE(Parse({"--plugin-max-series", "0"}).error.find("[1, 10000000]"), std::string::npos);
  EXPECT_NE(Parse({"--plugin-max-bytes", "1k"}).error.find("'1k'"), std::string::npos);
  EXPECT_NE(Parse({"--log-max-bytes", "100"}).error.find("at least 4096"), std::string::npos);
}

TEST(ExporterOptions, HelpAndVersionExitEarly) {
  auto h = Parse({"--help"});
  EXPECT_TRUE(h.exit_now);
  EXPECT_NE(h.output.find("--plugin-dir"), std::string::npos);
  auto v = Parse({"--version"});
  EXPECT_TRUE(v.exit_now);
  EXPECT_EQ(v.output.rfind("mt-exporter ", 0), 0u);
}

}  // namespace
}  // namespace mt::exporter
