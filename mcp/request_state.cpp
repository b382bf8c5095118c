#include "mcp/request_state.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

#include "base/sha256.h"
#include "mcp/base64.h"
#include "mcp/json_rpc.h"

namespace mt::mcp {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), int(n)) != 1)
    throw std::runtime_error("OpenSSL RAND_bytes failed");
  return out;
}

}  // namespace

RequestStateSealer::RequestStateSealer(std::string key, std::chrono::seconds ttl)
    : key_(key.empty() ? RandomBytes(32) : std::move(key)), ttl_(ttl) {}

std::string RequestStateSealer::Digest(const Json& arguments) {
  std::string canon = arguments.is_null() ? "{}" : arguments.dump();   // nlohmann sorts keys
  return base::Sha256Hex(canon);
}

std::string RequestStateSealer::Mac(const std::string& data) const {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), int(key_.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       md, &len);
  return std::string(reinterpret_cast<char*>(md), len);
}

std::string RequestStateSealer::Seal(const StateBinding& b, const Json& payload) {
  std::string nonce = RandomBytes(12);
  Json body = {{"v", 1},
               {"m", b.method},
               {"n", b.name},
               {"a", b.args_digest},
               {"p", b.principal},
               {"exp", NowMs() + std::chrono::duration_cast<std::chrono::milliseconds>(ttl_).count()},
               {"nonce", HexEncode(nonce)},
               {"d", payload}};
  std::string encoded = Base64UrlEncode(body.dump());
  return encoded + "." + Base64UrlEncode(Mac(encoded));
}

Json RequestStateSealer::Open(const std::string& sealed, const StateBinding& b) {
  auto bad = [](const std::string& why) { return RpcError(kInvalidParams, "invalid requestState: " + why); };
  size_t dot = sealed.find('.');
  if (dot == std::string::npos) throw bad("not a state issued by this server");
  std::string encoded = sealed.substr(0, dot);
  auto mac = Base64Decode(sealed.substr(dot + 1));
  std::string want = Mac(encoded);
  if (!mac || mac->size() != want.size() || CRYPTO_memcmp(mac->data(), want.data(), want.size()) != 0)
    throw bad("signature does not verify (tampered or from another server)");
  auto raw = Base64Decode(encoded);
  Json body = raw ? Json::parse(*raw, nullptr, false) : Json();
  if (!body.is_object() || body.value("v", 0) != 1) throw bad("unreadable payload");
  if (body.value("m", "") != b.method || body.value("n", "") != b.name)
    throw bad("issued for a different request (" + body.value("m", "") + " " + body.value("n", "") + ")");
  if (body.value("a", "") != b.args_digest) throw bad("issued for different arguments");
  if (body.value("p", "") != b.principal) throw bad("issued to a different caller");
  int64_t exp = body.value("exp", int64_t{0});
  int64_t now = NowMs();
  if (now > exp) throw bad("expired");
  std::string nonce = body.value("nonce", "");
  {
    std::lock_guard lock(mu_);
    for (auto it = redeemed_.begin(); it != redeemed_.end();) it = it->second < now ? redeemed_.erase(it) : ++it;
    if (!redeemed_.emplace(nonce, exp).second) throw bad("already used (each requestState is single-use)");
  }
  return body["d"];
}

}  // namespace mt::mcp
