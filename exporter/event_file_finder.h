// Finds the TFEvent file the training collector follows: the newest
// `events.out.tfevents.<epoch>.<hostname>...` below a directory (recursively), created
// at or after `since`, preferring files written on this host.
#pragma once

#include <optional>
#include <string>

namespace mt::exporter {

// Creation epoch (the 4th dot-separated field) of an event file name, if well-formed.
std::optional<double> EventFileEpoch(const std::string& basename);

std::optional<std::string> FindNewestEventFile(const std::string& dir, const std::string& host,
                                               double since_epoch);

}  // namespace mt::exporter
