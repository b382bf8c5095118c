// The JSON value type used across mt (nlohmann::json, ordered maps not needed).
#pragma once
#include <nlohmann/json.hpp>

namespace mt {
using Json = nlohmann::json;
}  // namespace mt
