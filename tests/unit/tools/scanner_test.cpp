// The scanner on the inputs it must survive and the line shapes it must read.
#include "tools/logs/log_scanner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <random>
#include <thread>

#include "test_util.h"
#include "tools/logs/log_line.h"
#include "tools/logs/scan_cache.h"

using mt::tools::testing::Iso;

namespace mt::tools {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::string StepLines(int from, int to, int ranks) {
  std::string s;
  for (int i = from; i <= to; ++i)
    for (int r = 0; r < ranks; ++r)
      s += std::to_string(r) + ": completed step: " + std::to_string(i) +
           ", seconds: 5.5, TFLOP/s/device: 900.0, MFU: 36.00%, Tokens/s/device: 3290.5, total_weights: 1, loss: 7.1\n";
  return s;
}

TEST(LogLine, PeelsPrefixes) {
  LogLine a = SplitLogLine(" 8: F0224 19:21:00 client.h:77] Terminating process");
  EXPECT_EQ(a.rank, 8);
  EXPECT_TRUE(a.has_time);
  EXPECT_EQ(a.severity, 'F');
  EXPECT_EQ(a.content, "Terminating process");
  EXPECT_EQ(LineTime(a, Iso("2026-03-01T00:00:00Z")), Iso("2026-02-24T19:21:00Z"));
  // A January reference resolves a December stamp to the previous year.
  EXPECT_EQ(LineTime(SplitLogLine("I1231 23:59:00.1 1 x.py:1] m"), Iso("2026-01-01T00:10:00Z")), Iso("2025-12-31T23:59:00Z"));
  LogLine b = SplitLogLine("2026-02-24 19:21:00,123 - INFO - completed step: 3\r");
  EXPECT_EQ(b.rank, -1);
  EXPECT_EQ(b.content, "- INFO - completed step: 3");
  EXPECT_EQ(LineTime(b, 0), Iso("2026-02-24T19:21:00Z"));
  EXPECT_EQ(SplitLogLine("12:34:56 not a label").rank, -1);
  EXPECT_EQ(SplitLogLine("[2026-02-24T19:21:00+01:00] x").content, "x");
  EXPECT_EQ(LineTime(SplitLogLine("[2026-02-24T19:21:00+01:00] x"), 0), Iso("2026-02-24T18:21:00Z"));
  EXPECT_EQ(StripAnsi("\x1b[1m\x1b[32mSUCCESS (exit 0)\x1b(B\x1b[m"), "SUCCESS (exit 0)");
}

TEST(Scanner, EmptyFile) {
  TempDir d;
  WriteFile(d.path() / "e.log", "");
  FileScan f = ScanFile(d.path() / "e.log");
  EXPECT_EQ(f.scan.lines, 0u);
  EXPECT_TRUE(f.scan.steps.empty());
}

TEST(Scanner, BinaryGarbageIsHarmless) {
  TempDir d;
  std::mt19937 rng(42);
  std::string junk(8 << 20, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  junk += "\n3: completed step: 7, seconds: 1.0, Tokens/s/device: 10\n";
  junk += std::string(1000, '\xff');
  WriteFile(d.path() / "b.log", junk);
  FileScan f = ScanFile(d.path() / "b.log");
  EXPECT_EQ(f.scan.bytes, junk.size());
  ASSERT_FALSE(f.scan.steps.empty());
  EXPECT_EQ(f.scan.steps.back().step, 7);
}

TEST(Scanner, FiftyMegabyteSingleLine) {
  TempDir d;
  std::string line(50 << 20, 'a');
  line.replace(1000, 18, "RESOURCE_EXHAUSTED");
  std::string log = StepLines(0, 2, 1) + line + "\n" + StepLines(3, 4, 1);
  WriteFile(d.path() / "big.log", log);
  FileScan f = ScanFile(d.path() / "big.log");
  EXPECT_EQ(f.scan.lines, 6u);
  EXPECT_EQ(f.scan.oversized_lines, 1u);
  EXPECT_EQ(f.scan.steps.size(), 5u);
  ASSERT_TRUE(f.scan.signatures.count("resource_exhausted"));
  EXPECT_EQ(f.scan.signatures.at("resource_exhausted").first[0].line, 4u);
  EXPECT_EQ(f.scan.steps.back().first_line, 6u);
  EXPECT_LE(f.scan.signatures.at("resource_exhausted").first[0].text.size(), kMaxEvidenceText);
}

TEST(Scanner, LineNumbersAcrossReadBlocks) {
  TempDir d;
  std::string log;
  for (int i = 0; i < 200000; ++i) log += "noise line number " + std::to_string(i) + " NCCL INFO Channel 00/0\n";
  log += "0: completed step: 1, seconds: 1.0\n";
  WriteFile(d.path() / "n.log", log);
  FileScan f = ScanFile(d.path() / "n.log");
  EXPECT_EQ(f.scan.lines, 200001u);
  ASSERT_EQ(f.scan.steps.size(), 1u);
  EXPECT_EQ(f.scan.steps[0].first_line, 200001u);
}

// Large files are read by a helper thread in blocks with carried partial lines; the result
// must equal feeding the same bytes in small odd-sized pieces.
TEST(Scanner, BlockReaderMatchesPiecewiseFeeding) {
  TempDir d;
  std::string log;
  std::mt19937 rng(3);
  int step = 0;
  while (log.size() < (40u << 20)) {
    for (int i = 0; i < 50; ++i) log += std::to_string(i % 24) + ": NCCL INFO Channel " + std::to_string(rng() % 64) + " via NET/IB\n";
    log += StepLines(step, step, 24);
    if (step % 997 == 0) log += "7: chi7:1:2 [3] NCCL WARN Timeout waiting for connect from peer 3\n";
    if (step % 4001 == 0) log += "RESOURCE_EXHAUSTED " + std::string(70000, 'z') + "\n";   // a long line now and then
    ++step;
  }
  WriteFile(d.path() / "l.log", log);
  FileScan f = ScanFile(d.path() / "l.log");
  LogScanner s(0);
  size_t pos = 0, have_from = 0;
  std::string buf;
  while (pos < log.size()) {
    size_t k = std::min<size_t>(log.size() - pos, 1 + rng() % 300000);
    buf.append(log, pos, k);
    pos += k;
    size_t used = s.Feed(buf.data(), buf.size(), false);
    if (used == 0 && buf.size() > 200000) {
      s.FeedLongLinePiece(buf.data(), buf.size());
      used = buf.size();
    }
    buf.erase(0, used);
    have_from += used;
  }
  s.Feed(buf.data(), buf.size(), true);
  LogScan p = s.Result();
  EXPECT_EQ(f.scan.lines, p.lines);
  EXPECT_EQ(f.scan.bytes, p.bytes);
  EXPECT_EQ(f.scan.step_lines, p.step_lines);
  ASSERT_EQ(f.scan.steps.size(), p.steps.size());
  EXPECT_EQ(f.scan.steps.back().last_line, p.steps.back().last_line);
  EXPECT_EQ(f.scan.signatures.at("nccl_timeout").count, p.signatures.at("nccl_timeout").count);
  EXPECT_EQ(f.scan.signatures.at("nccl_timeout").last.back().line, p.signatures.at("nccl_timeout").last.back().line);
  EXPECT_EQ(f.scan.signatures.at("resource_exhausted").count, p.signatures.at("resource_exhausted").count);
  EXPECT_EQ(static_cast<int>(f.scan.steps.size()), step);
}

// Big logs are scanned as two halves on two threads and merged. Whatever sits at the
// split — nothing special, a traceback, a heartbeat task list, a JOB SUMMARY — the
// result must be the serial one.
void ExpectSameScan(const LogScan& a, const LogScan& b) {
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.step_lines, b.step_lines);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].step, b.steps[i].step);
    EXPECT_EQ(a.steps[i].entries, b.steps[i].entries) << a.steps[i].step;
    EXPECT_EQ(a.steps[i].first_line, b.steps[i].first_line) << a.steps[i].step;
    EXPECT_EQ(a.steps[i].last_line, b.steps[i].last_line) << a.steps[i].step;
    EXPECT_EQ(a.steps[i].rank, b.steps[i].rank);
    EXPECT_DOUBLE_EQ(a.steps[i].tgs_sum, b.steps[i].tgs_sum);
  }
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (const auto& [r, rec] : a.ranks) {
    EXPECT_EQ(rec.last_step_line, b.ranks.at(r).last_step_line) << r;
    EXPECT_EQ(rec.step_lines, b.ranks.at(r).step_lines) << r;
    EXPECT_EQ(rec.own_death_line, b.ranks.at(r).own_death_line) << r;
    EXPECT_EQ(rec.last_line, b.ranks.at(r).last_line) << r;
  }
  ASSERT_EQ(a.signatures.size(), b.signatures.size());
  for (const auto& [k, h] : a.signatures) {
    const auto& g = b.signatures.at(k);
    EXPECT_EQ(h.count, g.count) << k;
    ASSERT_EQ(h.first.size(), g.first.size()) << k;
    ASSERT_EQ(h.last.size(), g.last.size()) << k;
    for (size_t i = 0; i < h.first.size(); ++i) EXPECT_EQ(h.first[i].line, g.first[i].line) << k;
    for (size_t i = 0; i < h.last.size(); ++i) EXPECT_EQ(h.last[i].line, g.last[i].line) << k;
  }
  ASSERT_EQ(a.heartbeats.size(), b.heartbeats.size());
  for (size_t i = 0; i < a.heartbeats.size(); ++i) EXPECT_EQ(a.heartbeats[i].tasks, b.heartbeats[i].tasks);
  ASSERT_EQ(a.tracebacks.size(), b.tracebacks.size());
  for (size_t i = 0; i < a.tracebacks.size(); ++i) EXPECT_EQ(a.tracebacks[i].exception.line, b.tracebacks[i].exception.line);
  EXPECT_EQ(a.tracebacks_total, b.tracebacks_total);
  EXPECT_EQ(a.summary.present, b.summary.present);
  EXPECT_EQ(a.summary.status_line, b.summary.status_line);
  EXPECT_EQ(a.init_waves.size(), b.init_waves.size());
  EXPECT_EQ(a.node_exits.size(), b.node_exits.size());
  EXPECT_EQ(a.header, b.header);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.checkpoint_steps, b.checkpoint_steps);
  EXPECT_EQ(a.first_time, b.first_time);
  EXPECT_EQ(a.first_time_line, b.first_time_line);
  EXPECT_EQ(a.last_time, b.last_time);
  EXPECT_EQ(a.last_line_with_time, b.last_line_with_time);
  EXPECT_EQ(a.benign_lines, b.benign_lines);
}

TEST(Scanner, ParallelHalvesEqualTheSerialScan) {
  const char* middles[] = {
      "",
      "5: Traceback (most recent call last):\n5:   File \"x.py\", line 1, in f\n5: ValueError: split here\n",
      "0: E0224 10:00:00.000000 1 coordination_service.cc:1] UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):\n"
      "0: /job:jax_worker/replica:0/task:8\n0: /job:jax_worker/replica:0/task:10\n",
      "========================== JOB SUMMARY ==========================\n  Status: FAILED (exit 1)\n"
      "=================================================================\n",
      "3: chi3:1:2 [0] init.cc:2095 NCCL WARN MSCCL++: Feature not enabled\n4: chi4:1:2 [0] init.cc:2095 NCCL WARN MSCCL++: Feature not enabled\n",
  };
  for (const char* middle : middles) {
    TempDir d;
    std::string head = "JOB_ID=7001\nNNODES=2\nJOB_NODELIST=chi[1-2]\nMODEL_NAME=m\n";
    std::string body;
    for (int s = 0; s < 3000; ++s) {
      body += "0: I0224 10:00:00.000000 1 f.py:1] noise noise NCCL INFO Channel 00\n";
      body += StepLines(s, s, 8);
      if (s % 250 == 0) body += "3: NCCL WARN Timeout waiting for peer\n4: Config param steps: 9\n";
      if (s % 700 == 0) body += "6: Traceback (most recent call last):\n6:   File \"a.py\"\n6: KeyError: 'x'\n";
    }
    // Put `middle` at the exact split point (the first line start after size / 2), with
    // the same number of bytes after it as before it.
    std::string tail = body;
    std::string log = head + body + middle + tail;
    size_t split = (log.size()) / 2;
    std::string prefix = head + body;
    // Pad the front so that size/2 falls inside `middle`.
    if (std::string(middle).size() > 0) {
      size_t want = prefix.size() + 1;   // first byte of `middle`
      size_t total = log.size();
      if (want * 2 > total) tail += std::string(want * 2 - total, '\n');
      log = head + body + middle + tail;
      split = log.size() / 2;
    }
    (void)split;
    WriteFile(d.path() / "p.log", log);
    FileScan serial = ScanFile(d.path() / "p.log", nullptr, UINT64_MAX);
    FileScan halves = ScanFile(d.path() / "p.log", nullptr, 1 << 20);
    ExpectSameScan(serial.scan, halves.scan);
    // And the resumable state after a parallel scan continues like the serial one.
    {
      std::ofstream f(d.path() / "p.log", std::ios::app);
      f << StepLines(9000, 9001, 8) << "2: RESOURCE_EXHAUSTED: Out of memory\n";
    }
    FileScan a = ScanFile(d.path() / "p.log", &serial.state, UINT64_MAX);
    FileScan b = ScanFile(d.path() / "p.log", &halves.state, UINT64_MAX);
    ExpectSameScan(a.scan, b.scan);
  }
}

TEST(Scanner, NotARegularFileOrUnreadable) {
  TempDir d;
  std::filesystem::create_directories(d.path() / "dir.log");
  EXPECT_THROW(ScanFile(d.path() / "dir.log"), std::runtime_error);
  ASSERT_EQ(mkfifo((d.path() / "fifo.log").c_str(), 0600), 0);
  try {
    ScanFile(d.path() / "fifo.log");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos);
  }
  EXPECT_THROW(ScanFile(d.path() / "missing.log"), std::runtime_error);
  std::filesystem::create_symlink("loop2.log", d.path() / "loop1.log");
  std::filesystem::create_symlink("loop1.log", d.path() / "loop2.log");
  try {
    ScanFile(d.path() / "loop1.log");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("loop"), std::string::npos);
  }
  if (geteuid() != 0) {   // root reads mode-000 files anyway
    WriteFile(d.path() / "locked.log", "x\n");
    chmod((d.path() / "locked.log").c_str(), 0);
    EXPECT_THROW(ScanFile(d.path() / "locked.log"), std::runtime_error);
  }
}

TEST(ScanCacheTest, UnchangedAppendedTruncated) {
  TempDir d;
  auto p = d.path() / "j.log";
  WriteFile(p, StepLines(0, 9, 4));
  testing::SetMtime(p, 1000);
  ScanCache cache;
  auto a = cache.Get(p);
  EXPECT_FALSE(a.from_cache);
  auto b = cache.Get(p);
  EXPECT_TRUE(b.from_cache);
  EXPECT_EQ(a.data.get(), b.data.get());   // shared, not copied
  // Append: only the new bytes are scanned, and the result equals a full scan.
  {
    std::ofstream f(p, std::ios::app);
    f << StepLines(10, 14, 4) << "2: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1GiB";   // no '\n' yet
  }
  testing::SetMtime(p, 1001);
  auto c = cache.Get(p);
  EXPECT_TRUE(c.incremental);
  EXPECT_EQ(c.data->scan.steps.size(), 15u);
  EXPECT_EQ(c.data->scan.signatures.count("resource_exhausted"), 1u);
  FileScan full = ScanFile(p);
  EXPECT_EQ(full.scan.lines, c.data->scan.lines);
  EXPECT_EQ(full.scan.step_lines, c.data->scan.step_lines);
  {
    std::ofstream f(p, std::ios::app);
    f << "\n" << StepLines(15, 15, 4);
  }
  testing::SetMtime(p, 1002);
  auto e = cache.Get(p);
  EXPECT_TRUE(e.incremental);
  EXPECT_EQ(e.data->scan.steps.size(), 16u);
  EXPECT_EQ(e.data->scan.signatures.at("resource_exhausted").count, 1u);   // the partial line was not counted twice
  EXPECT_EQ(e.data->scan.lines, ScanFile(p).scan.lines);
  // Rewritten shorter: a full rescan.
  WriteFile(p, StepLines(0, 2, 1));
  testing::SetMtime(p, 1003);
  auto g = cache.Get(p);
  EXPECT_FALSE(g.incremental);
  EXPECT_EQ(g.data->scan.steps.size(), 3u);
  // Same size, different bytes before the resume point: not taken for an append.
  WriteFile(p, StepLines(5, 7, 1));
  testing::SetMtime(p, 1004);
  {
    std::ofstream f(p, std::ios::app);
    f << StepLines(8, 8, 1);
  }
  testing::SetMtime(p, 1005);
  auto h = cache.Get(p);
  EXPECT_EQ(h.data->scan.steps.front().step, 5);
}

TEST(Scanner, AppendedAndTruncatedWhileBeingRead) {
  TempDir d;
  auto p = d.path() / "live.log";
  WriteFile(p, StepLines(0, 20000, 8));   // ~22 MB
  const auto size0 = std::filesystem::file_size(p);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    int i = 20001;
    while (!stop) {
      std::ofstream f(p, std::ios::app);
      f << StepLines(i, i, 8);
      ++i;
    }
  });
  for (int round = 0; round < 3; ++round) {
    FileScan f = ScanFile(p);
    EXPECT_GE(f.scan.bytes, size0);
    EXPECT_GE(f.scan.steps.size(), 20001u);
  }
  stop = true;
  writer.join();
  // Truncation racing the read: either result is fine, a crash or an exception is not.
  std::thread truncater([&] { std::filesystem::resize_file(p, 1000); });
  FileScan t = ScanFile(p);
  truncater.join();
  EXPECT_LE(t.scan.steps.size(), 30000u);
  ScanCache cache;
  auto again = cache.Get(p);
  EXPECT_EQ(again.data->size, 1000u);
}

}  // namespace
}  // namespace mt::tools
