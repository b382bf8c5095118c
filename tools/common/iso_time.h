// ISO-8601 time lives in base/iso_time.h (the launcher and mcp/ need it too). These names
// keep the tools/ subsystems that spell it mt::tools:: compiling; new code includes
// base/iso_time.h.
#pragma once
#include "base/iso_time.h"

namespace mt::tools {

using base::CivilYear;
using base::FormatIso8601;
using base::ParseIso8601;
using base::UnixFromCivil;

}  // namespace mt::tools
