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

TEST_F(ConfigTest, MetricsSourcesKeepSecretsByReference) {
  Config c = LoadConfigFile(Write(R"(
metrics:
  sources:
    - name: central
      url: https://prom.example:9090/prefix
      bearer_token: {file: secrets/token}
      headers: {X-Scope-OrgID: team-a, X-Extra: {env: MT_CONFIG_TEST_HEADER}}
      ca_file: ca.pem
      timeout_seconds: 5
      max_samples: 20000
)"));
  ASSERT_EQ(c.metrics_sources.size(), 1u);
  const MetricsSource& s = c.metrics_sources[0];
  EXPECT_EQ(s.url, "https://prom.example:9090/prefix");
  EXPECT_EQ(s.bearer_token.file, dir / "secrets/token");   // relative to the dir holding configs/
  EXPECT_EQ(s.ca_file, dir / "ca.pem");
  ASSERT_EQ(s.headers.size(), 2u);
  EXPECT_EQ(s.timeout_seconds, 5);
  EXPECT_EQ(s.max_samples, 20000u);

  // The secret is read when a query is made; its absence names the file, not a value.
  try {
    ClientOptionsFor(s);
    ADD_FAILURE() << "a missing token file must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("secrets/token"), std::string::npos) << e.what();
  }
  fs::create_directories(dir / "secrets");
  std::ofstream(dir / "secrets/token") << "s3cr3t-token\nsecond line ignored\n";
  ::setenv("MT_CONFIG_TEST_HEADER", "x", 1);
  PrometheusClientOptions o = ClientOptionsFor(s);
  ::unsetenv("MT_CONFIG_TEST_HEADER");
  ASSERT_EQ(o.headers.size(), 3u);
  EXPECT_EQ(o.headers[0].first, "Authorization");
  EXPECT_EQ(o.headers[0].second, "Bearer s3cr3t-token");
  EXPECT_EQ(o.headers[1], (std::pair<std::string, std::string>{"X-Scope-OrgID", "team-a"}));
  EXPECT_EQ(o.max_samples, 20000u);
  EXPECT_EQ(o.request_timeout, std::chrono::seconds(5));

  EXPECT_EQ(FindMetricsSource(c.metrics_sources, "central").name, "central");
  EXPECT_THROW(FindMetricsSource(c.metrics_sources, "other"), std::invalid_argument);
}

TEST_F(ConfigTest, MetricsSourceMistakesAreRefusedAtLoad) {
  auto source = [](const std::string& body) { return "metrics:\n  sources:\n    - name: s\n" + body; };
  const std::string url = "      url: http://127.0.0.1:9090\n";
  EXPECT_NE(LoadError(source(url + "      bearer_token: inline-secret\n")).find("is a secret"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      basic_auth: {user: u, password: {value: p}}\n")).find("is a secret"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      headers: {Authorization: x}\n")).find("never inline"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      bearer_token: {env: A, file: b}\n")).find("not 2"), std::string::npos);
  EXPECT_NE(LoadError(source("      url: ftp://x\n")).find("http:// or https://"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      timeout_seconds: 0\n")).find("timeout_seconds"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      max_samples: 10\n")).find("max_samples"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      client_cert_file: c.pem\n")).find("go together"), std::string::npos);
  EXPECT_NE(LoadError(source(url + "      tls: {}\n")).find("unknown setting 'tls'"), std::string::npos);
  EXPECT_NE(LoadError(source(url) + "    - name: s\n" + url).find("configured twice"), std::string::npos);
  EXPECT_NE(LoadError("metrics:\n  sources:\n    - name: per_job\n" + url).find("reserved"), std::string::npos);
}

TEST_F(ConfigTest, WebhooksTakeTheirUrlByReferenceOnly) {
  Config c = LoadConfigFile(Write(R"(
notifications:
  webhooks:
    - name: ops
      url: {env: MT_OPS_HOOK}
      format: slack
      attempts: 5
    - name: pager_2
      url: {file: secrets/pager.url}
)"));
  ASSERT_EQ(c.webhooks.size(), 2u);
  EXPECT_EQ(c.webhooks[0].name, "ops");
  EXPECT_EQ(c.webhooks[0].url.env, "MT_OPS_HOOK");
  EXPECT_EQ(c.webhooks[0].format, "slack");
  EXPECT_EQ(c.webhooks[0].attempts, 5);
  EXPECT_EQ(c.webhooks[1].url.file, dir / "secrets" / "pager.url");   // relative to the config's base
  auto hook = [](const std::string& body) { return "notifications:\n  webhooks:\n    - name: h\n" + body; };
  const std::string inline_url = LoadError(hook("      url: https://hooks.example/T0/B0/secret\n"));
  EXPECT_NE(inline_url.find("not inline"), std::string::npos);
  EXPECT_EQ(inline_url.find("hooks.example"), std::string::npos) << "the error repeats the secret URL";
  EXPECT_NE(LoadError(hook("      url: {env: X}\n      format: teams\n")).find("json or slack"), std::string::npos);
  EXPECT_NE(LoadError(hook("      url: {env: X}\n      attempts: 0\n")).find("attempts"), std::string::npos);
  EXPECT_NE(LoadError(hook("")).find("url is required"), std::string::npos);
  EXPECT_NE(LoadError("notifications:\n  webhooks:\n    - name: a b\n      url: {env: X}\n").find("name of 1-64"), std::string::npos);
  EXPECT_NE(LoadError(hook("      url: {env: X}\n") + "    - name: h\n      url: {env: Y}\n").find("defined twice"), std::string::npos);
  EXPECT_NE(LoadError("notifications:\n  email: x\n").find("unknown setting 'email'"), std::string::npos);
}

}  // namespace
}  // namespace mt::tools
