#include "base/sha256.h"

#include <openssl/evp.h>

namespace mt::base {

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(2 * len);
  for (unsigned i = 0; i < len; ++i) s += {kHex[md[i] >> 4], kHex[md[i] & 15]};
  return s;
}

}  // namespace mt::base
