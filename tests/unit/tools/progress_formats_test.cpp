// Every row of the progress-format table on lines in its framework's own layout, and the
// scanner keeping one step series per log.
#include "tools/logs/progress_formats.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "tools/logs/log_scanner.h"

namespace mt::tools {
namespace {

struct Row {
  const char* line;
  const char* format;
  int64_t step, total;
  double seconds, tflops, tgs, loss;
};

TEST(ProgressFormats, EachFrameworkLineGivesItsFields) {
  const Row rows[] = {
      {" iteration      100/  500000 | consumed samples:        12800 | elapsed time per iteration (ms): 1234.5 | "
       "throughput per GPU (TFLOP/s/GPU): 150.2 | learning rate: 1.000000E-04 | global batch size:   128 | "
       "lm loss: 5.123456E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 |",
       "megatron", 100, 500000, 1.2345, 150.2, -1, 5.123456},
      {"step:  7  loss:  9.8765  grad_norm:  1.2345  memory: 14.06GiB(17.79%)  tps: 1,235  tflops: 71.56  mfu: 7.24%",
       "torchtitan", 7, -1, -1, 71.56, 1235, 9.8765},
      {"[Rank 0] step=120, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]", "deepspeed", 120, -1, -1, -1, -1, -1},
      {"Epoch 0:  50%|#####     | 10/20 [00:05<00:05, v_num=0, reduced_train_loss=2.34, global_step=9.000]\r"
       "Epoch 0:  55%|#####5    | 11/20 [00:05<00:04, v_num=0, reduced_train_loss=2.30, global_step=10.00]",
       "lightning", 10, -1, -1, -1, -1, 2.30},
      {"Progress on:train 150it/200it rate:3.3s/it remaining:2:45 elapsed:8:15 postfix:loss=3.14", "levanter", 150,
       200, 3.3, -1, -1, 3.14},
      {"{'loss': 2.3100, 'grad_norm': 0.98, 'learning_rate': 1e-05, 'epoch': 0.12, 'step': 120}", "hf_trainer", 120, -1,
       -1, -1, -1, 2.31},
      {"2025-05-21 11:34:22,546 - root - INFO - Step: 175 | Loss: 7.53 | Tokens per second: 7610.15 | MFU (%): 39.66 | "
       "TFLOPs: 392.24",
       "step_loss", 175, -1, -1, 392.24, 7610.15, 7.53},
      {"Step [120/5000] - train_loss: 2.31", "step_loss", 120, 5000, -1, -1, -1, -1},
  };
  for (const Row& r : rows) {
    ProgressFields p;
    int f = -1;
    ASSERT_TRUE(ParseProgressLine(r.line, &p, &f)) << r.line;
    EXPECT_EQ(ProgressFormats()[static_cast<size_t>(f)].name, r.format) << r.line;
    EXPECT_EQ(p.step, r.step) << r.line;
    EXPECT_EQ(p.total, r.total) << r.line;
    EXPECT_NEAR(p.seconds, r.seconds, 1e-9) << r.line;
    EXPECT_NEAR(p.tflops, r.tflops, 1e-9) << r.line;
    EXPECT_NEAR(p.tgs, r.tgs, 1e-9) << r.line;
    EXPECT_NEAR(p.loss, r.loss, 1e-9) << r.line;
  }
}

TEST(ProgressFormats, LinesThatOnlyMentionAStepAreNotProgress) {
  ProgressFields p;
  int f = -1;
  for (const char* line : {"  File \"train.py\", line 88, in train_step", "optimizer.step() took 3 ms",
                           "Saved a checkpoint at step 200.", "Epoch 3/3", "max_steps: 5000",
                           "slurmstepd: error: Exceeded step memory limit at some point."})
    EXPECT_FALSE(ParseProgressLine(line, &p, &f)) << line;
}

TEST(ProgressFormats, TheScannerKeepsOneSeriesAndTheStatedTotal) {
  testing::TempDir d;
  std::string log;
  for (int i = 10; i <= 50; i += 10)
    log += "[2026-03-01 10:00:" + std::to_string(i) + "] iteration " + std::to_string(i) +
           "/ 1000 | consumed samples: 1 | elapsed time per iteration (ms): 2000.0 | lm loss: 3.0 |\n";
  log += "quoted from another run: step: 99999  loss: 1.0  tps: 5\n";
  testing::WriteFile(d.path() / "m.log", log);
  FileScan f = ScanFile(d.path() / "m.log");
  EXPECT_EQ(f.scan.step_format, "megatron");
  EXPECT_EQ(f.scan.step_total, 1000);
  ASSERT_EQ(f.scan.steps.size(), 5u);
  EXPECT_EQ(f.scan.steps.back().step, 50);
  EXPECT_DOUBLE_EQ(f.scan.steps.back().seconds, 2.0);
}

}  // namespace
}  // namespace mt::tools
