// The Chrome-trace reader on bad input: each fault gets its own clear error (naming the
// file and the byte offset, never the file's content) and nothing crashes; and on the odd
// but valid shapes real traces have (metadata after the events, mixed pid types, nested
// args, non-object events, legacy arrays).
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/temp_dirs.h"
#include "tools/trace/chrome_trace_reader.h"

namespace fs = std::filesystem;
namespace tr = mt::tools::trace;
using mt::base::Errc;

namespace {

class TraceReaderTest : public testing::Test {
 protected:
  void SetUp() override { dir_ = fs::temp_directory_path() / ("mt-trace-reader-" + std::to_string(::getpid())); fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string WriteGzip(const std::string& name, const std::string& bytes, double keep_fraction = 1.0) {
    fs::path p = dir_ / (name + ".full");
    gzFile g = gzopen(p.c_str(), "wb");
    gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(g);
    std::ifstream in(p, std::ios::binary);
    std::string gz((std::istreambuf_iterator<char>(in)), {});
    return Write(name, gz.substr(0, static_cast<size_t>(static_cast<double>(gz.size()) * keep_fraction)));
  }
  fs::path dir_;
};

const std::string kSmall =
    R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 0, "tid": 7, "ts": 10, "dur": 5,)"
    R"( "args": {"correlation": 3, "Input Dims": [[2, 3], []], "Input type": ["float"]}},)"
    R"( 17, "text", [1, 2], {"ph": "X", "name": "bad", "ts": "12", "dur": 1},)"
    R"( {"ph": "X", "name": "neg", "ts": 1, "dur": -1}, {"name": "ProfilerStep#4", "ph": "X", "cat": "user_annotation",)"
    R"( "pid": "Spans", "tid": 1.0, "ts": 9, "dur": 20, "args": {"nested": {"a": [{"b": []}]}}}],)"
    R"( "distributedInfo": {"rank": 3, "world_size": 8, "backend": "nccl"}, "displayTimeUnit": "ms",)"
    R"( "baseTimeNanoseconds": 1700000000000000000, "deviceProperties": [{"id": 0}, {"id": 1}]})";

TEST_F(TraceReaderTest, ReadsEventsAndMetadataAfterThem) {
  auto t = tr::ReadChromeTrace(Write("a.json", kSmall));
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->total, 4);          // the three non-objects are not events
  EXPECT_EQ(t->bad_x, 2);          // a string ts, a negative dur
  ASSERT_EQ(t->events.size(), 2u);
  const tr::TraceEvent& k = t->events[0];
  EXPECT_EQ(t->strings[k.name], "nccl:all_reduce");
  EXPECT_EQ(k.correlation, 3);
  ASSERT_GE(k.comm_args, 0);
  const tr::CommArgs& a = t->comm_args[static_cast<size_t>(k.comm_args)];
  ASSERT_TRUE(a.input_dims0.has_value());
  EXPECT_EQ(*a.input_dims0, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->strings[a.input_type0], "float");
  EXPECT_EQ(t->strings[t->events[1].pid], "s:Spans");
  EXPECT_EQ(t->strings[t->events[1].tid], "i:1");    // 1.0 and 1 are the same thread
  ASSERT_TRUE(t->distributed.has_value());
  EXPECT_EQ(t->distributed->rank, 3);
  EXPECT_EQ(t->distributed->world_size, 8);
  EXPECT_EQ(t->device_properties, 2);
  EXPECT_TRUE(t->has_base_time_ns);
  EXPECT_EQ(t->display_time_unit, "ms");
}

TEST_F(TraceReaderTest, GzipAndPlainReadTheSame) {
  auto plain = tr::ReadChromeTrace(Write("p.json", kSmall));
  auto gz = tr::ReadChromeTrace(WriteGzip("g.json.gz", kSmall));
  ASSERT_TRUE(plain.ok() && gz.ok()) << gz.message();
  EXPECT_EQ(plain->events.size(), gz->events.size());
  EXPECT_EQ(plain->total, gz->total);
}

TEST_F(TraceReaderTest, InputShapesAreKeptOnlyWhereCollectivesAreSized) {
  auto t = tr::ReadChromeTrace(Write("s.json", R"({"traceEvents": [)"
      R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"Input Dims": [[4, 4]], "Input type": ["float"]}},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 1, "dur": 2, "args": {"Input Dims": [[8]], "Input type": ["float"]}}]})"));
  ASSERT_TRUE(t.ok()) << t.message();
  ASSERT_EQ(t->events.size(), 2u);
  EXPECT_EQ(t->events[0].comm_args, -1);
  EXPECT_GE(t->events[1].comm_args, 0);
}

TEST_F(TraceReaderTest, InvalidUtf8NamesAreRepaired) {
  auto t = tr::ReadChromeTrace(Write("u.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\xff\xfe" "1\", \"ts\": 1, \"dur\": 2}]}"));
  ASSERT_TRUE(t.ok()) << t.message();
  ASSERT_EQ(t->events.size(), 1u);
  EXPECT_EQ(t->strings[t->events[0].name], "k??1");
}

TEST_F(TraceReaderTest, LegacyBareArray) {
  auto t = tr::ReadChromeTrace(Write("l.json", R"([{"name": "aten::mm", "ph": "X", "ts": 1, "dur": 2, "pid": "CPU functions", "tid": 1, "args": {}}])"));
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->format, tr::TraceFile::Format::kLegacy);
  EXPECT_EQ(t->events.size(), 1u);
}

TEST_F(TraceReaderTest, TruncatedGzipIsNamed) {
  std::string big = kSmall;
  for (int i = 0; i < 200; ++i) big.insert(17, R"({"ph": "X", "name": "pad", "ts": )" + std::to_string(i) + R"(, "dur": 1},)");
  auto t = tr::ReadChromeTrace(WriteGzip("cut.json.gz", big, 0.6));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kInvalid);
  EXPECT_NE(t.message().find("gzip data is corrupt or truncated"), std::string::npos) << t.message();
}

TEST_F(TraceReaderTest, GarbageAfterGzipMagicIsNamed) {
  auto t = tr::ReadChromeTrace(Write("junk.json.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(64, 'x')));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kInvalid);
}

TEST_F(TraceReaderTest, MalformedJsonGivesOffsetNotContent) {
  auto t = tr::ReadChromeTrace(Write("m.json", R"({"traceEvents": [{"ph": "X", "name": "SECRET-TOKEN", "ts": 1,)"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kInvalid);
  EXPECT_NE(t.message().find("at byte"), std::string::npos) << t.message();
  EXPECT_NE(t.message().find("not valid JSON"), std::string::npos) << t.message();
  EXPECT_EQ(t.message().find("SECRET"), std::string::npos) << t.message();
}

TEST_F(TraceReaderTest, WrongShapesAreNamed) {
  struct Case { const char* json; const char* says; };
  for (const Case& c : {Case{"42", "neither an object nor an array"}, Case{R"({"traceEvents": 5})", "not an array"},
                        Case{R"({"traceEvents": {"a": 1}})", "an object, not an array"},
                        Case{R"({"schemaVersion": 1})", "without \"traceEvents\""}, Case{"", "not valid JSON"},
                        Case{R"({"traceEvents": []} trailing)", "not valid JSON"}}) {
    auto t = tr::ReadChromeTrace(Write("w.json", c.json));
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_EQ(t.code(), Errc::kInvalid) << c.json;
    EXPECT_NE(t.message().find(c.says), std::string::npos) << c.json << " → " << t.message();
  }
}

TEST_F(TraceReaderTest, NestingIsBoundedNotRecursed) {
  auto nested = [](int depth) {
    return R"({"traceEvents": [{"ph": "X", "name": "n", "ts": 1, "dur": 1, "args": {"x": )" + std::string(depth, '[') +
           std::string(depth, ']') + "}}]}";
  };
  auto ok = tr::ReadChromeTrace(Write("d.json", nested(900)));
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok->events.size(), 1u);
  // 200,000 levels (a few hundred bytes gzipped): refused at the cap, not parsed into memory.
  auto deep = tr::ReadChromeTrace(Write("d.json", nested(200000)));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.code(), Errc::kInvalid);
  EXPECT_NE(deep.message().find("nested deeper than 1000 levels"), std::string::npos) << deep.message();
}

TEST_F(TraceReaderTest, ByteAndStringCapsAreTooLarge) {
  tr::ReadLimits limits;
  limits.max_bytes = 100;
  auto t = tr::ReadChromeTrace(WriteGzip("b.json.gz", kSmall), limits);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kTooLarge);
  EXPECT_NE(t.message().find("bytes of JSON"), std::string::npos) << t.message();
  std::string many = R"({"traceEvents": [)";
  for (int i = 0; i < 50; ++i) many += R"({"ph": "i", "name": "n)" + std::to_string(i) + R"("},)";
  many += R"({"ph": "i", "name": "last"}]})";
  tr::ReadLimits few;
  few.max_strings = 20;
  auto s = tr::ReadChromeTrace(Write("s.json", many), few);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kTooLarge);
}

TEST_F(TraceReaderTest, EventCapIsTooLarge) {
  tr::ReadLimits limits;
  limits.max_events = 1;
  auto t = tr::ReadChromeTrace(Write("c.json", kSmall), limits);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kTooLarge);
}

TEST_F(TraceReaderTest, MissingFileAndDirectory) {
  auto t = tr::ReadChromeTrace((dir_ / "absent.json").string());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kNotFound);
  auto d = tr::ReadChromeTrace(dir_.string());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.code(), Errc::kNotRegular);
}

}  // namespace
