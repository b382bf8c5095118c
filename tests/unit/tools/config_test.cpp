#include "tools/catalog/config.h"

#include <gtest/gtest.h>

#include <fstream>


namespace mt::tools {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("mt-config-test-" + std::to_string(::getpid()));
    fs::create_directories(dir / "configs");
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path Write(const std::string& text) {
    fs::path p = dir / "configs" / "mt.yaml";
    std::ofstream(p) << text;
    return p;
  }
  std::string LoadError(const std::string& text) {
    try {
      LoadConfigFile(Write(text));
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir;
};

TEST_F(ConfigTest, ReadsWorkspaceTokensAndHttpSettings) {
  Config c = LoadConfigFile(Write(R"(
workspace: outputs
http:
  allowed_origins: [https://ops.example.com]
  max_body_bytes: 1024
tokens:
  - {name: ci-bot, role: ci, sha256: 5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8}
)"));
  EXPECT_EQ(c.workspace, dir / "outputs");   // relative to the repository holding configs/
  ASSERT_EQ(c.tokens.size(), 1u);
  EXPECT_EQ(c.tokens[0].role, "ci");
  EXPECT_EQ(c.tokens[0].sha256_hex, "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8");
  EXPECT_EQ(c.allowed_origins, std::vector<std::string>{"https://ops.example.com"});
  EXPECT_EQ(c.max_body_bytes, 1024u);
}

TEST_F(ConfigTest, BadFilesNameTheProblem) {
  EXPECT_NE(LoadError("tokens: [{name: a, sha256: abc}]").find("64 hex digits"), std::string::npos);
  EXPECT_NE(LoadError("tokens: [{name: a, role: root, sha256: " + std::string(64, 'a') + "}]").find("role must be"),
            std::string::npos);
  EXPECT_NE(LoadError("tokens: [{sha256: " + std::string(64, 'a') + "}]").find("needs a name"), std::string::npos);
  EXPECT_NE(LoadError("workspace: [unclosed").find("mt.yaml"), std::string::npos);
  EXPECT_NE(LoadError("- just\n- a list\n").find("mapping"), std::string::npos);
  EXPECT_NE(LoadError("http: {allowed_hosts: 5}").find("allowed_hosts must be a list"), std::string::npos);
}

}  // namespace
}  // namespace mt::tools
