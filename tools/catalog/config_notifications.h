// mt.yaml's `notifications:` section: the webhooks a supervised run (`mt watch`) posts its
// notices to (tools/supervise/notifier.h). A webhook's URL is its secret and is given only by
// reference, `{env: NAME}` or `{file: PATH}`, never inline.
//
//   notifications:
//     webhooks:
//       - name: ops                 # letters, digits, '-', '_'
//         url: {env: MT_OPS_WEBHOOK}
//         format: slack             # json (default) | slack
//         timeout_seconds: 10
//         attempts: 3
//         backoff_seconds: 1
#pragma once
#include <filesystem>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tools/supervise/notifier.h"

namespace mt::tools {

// Throws std::runtime_error naming the webhook and the setting.
std::vector<Webhook> WebhooksFromYaml(const YAML::Node& notifications, const std::filesystem::path& base);

}  // namespace mt::tools
