// The one place where native collectors are registered, in scrape order.
#pragma once

#include <memory>
#include <vector>

#include "exporter/collector.h"
#include "exporter/options.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

// `fs` must outlive the returned collectors.
std::vector<std::unique_ptr<Collector>> BuildCollectors(const Options& options, const RootFs& fs);

}  // namespace mt::exporter
