// Byte-to-text encodings: Base64 (RFC 4648 §4), base64url (§5, unpadded) and hex.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace mt::mcp {

std::string Base64Encode(std::string_view bytes);
std::string Base64UrlEncode(std::string_view bytes);
// Accepts either alphabet, with or without padding; nullopt on any invalid character.
std::optional<std::string> Base64Decode(std::string_view text);
// Strict RFC 4648 §4: standard alphabet, padded to a multiple of 4, '=' only at the end;
// nullopt otherwise.
std::optional<std::string> Base64DecodeStrict(std::string_view text);
// Lower-case hex, two digits per byte.
std::string HexEncode(std::string_view bytes);

}  // namespace mt::mcp
