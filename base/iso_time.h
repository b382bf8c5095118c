// ISO-8601 UTC timestamps as mt prints and accepts them, and the civil-date arithmetic the
// log scanner needs to turn absl/Slurm line prefixes into seconds since the Unix epoch.
// Everything is UTC and pure (no time zone database, no locale), so results are
// deterministic on every machine.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mt::base {

// Seconds since 1970-01-01T00:00:00Z for a proleptic Gregorian civil date and time.
int64_t UnixFromCivil(int year, int month, int day, int hour = 0, int minute = 0,
                      int second = 0);

// The civil year of `unix_seconds` (UTC).
int CivilYear(int64_t unix_seconds);

// Parses "YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]" (also with a space instead of 'T', or a
// date alone). A missing zone means UTC. Fractions are truncated to whole seconds.
std::optional<int64_t> ParseIso8601(std::string_view text);

// "2026-02-24T19:06:00Z".
std::string FormatIso8601(int64_t unix_seconds);

}  // namespace mt::base
