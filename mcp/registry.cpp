#include "mcp/registry.h"

#include <algorithm>

namespace mt::mcp {

namespace {

template <typename T, typename Key>
void Upsert(std::vector<std::shared_ptr<const T>>& list, T item, Key key) {
  auto ptr = std::make_shared<const T>(std::move(item));
  for (auto& existing : list) {
    if (key(*existing) == key(*ptr)) {
      existing = std::move(ptr);
      return;
    }
  }
  list.push_back(std::move(ptr));
}

}  // namespace

void Registry::AddTool(Tool tool) {
  {
    std::unique_lock lock(mu_);
    Upsert(tools_, std::move(tool), [](const Tool& t) { return t.name; });
  }
  Notify(ListKind::kTools);
}

bool Registry::RemoveTool(const std::string& name) {
  bool removed;
  {
    std::unique_lock lock(mu_);
    auto it = std::remove_if(tools_.begin(), tools_.end(), [&](const auto& t) { return t->name == name; });
    removed = it != tools_.end();
    tools_.erase(it, tools_.end());
  }
  if (removed) Notify(ListKind::kTools);
  return removed;
}

void Registry::AddResource(Resource resource) {
  {
    std::unique_lock lock(mu_);
    Upsert(resources_, std::move(resource), [](const Resource& r) { return r.uri; });
  }
  Notify(ListKind::kResources);
}

void Registry::AddResourceTemplate(ResourceTemplate resource_template) {
  {
    std::unique_lock lock(mu_);
    Upsert(templates_, std::move(resource_template), [](const ResourceTemplate& r) { return r.uri_template; });
  }
  Notify(ListKind::kResources);
}

void Registry::AddPrompt(Prompt prompt) {
  {
    std::unique_lock lock(mu_);
    Upsert(prompts_, std::move(prompt), [](const Prompt& p) { return p.name; });
  }
  Notify(ListKind::kPrompts);
}

std::shared_ptr<const Tool> Registry::FindTool(const std::string& name) const {
  std::shared_lock lock(mu_);
  for (const auto& t : tools_)
    if (t->name == name) return t;
  return nullptr;
}

std::shared_ptr<const Resource> Registry::FindResource(const std::string& uri) const {
  std::shared_lock lock(mu_);
  for (const auto& r : resources_)
    if (r->uri == uri) return r;
  return nullptr;
}

std::shared_ptr<const Prompt> Registry::FindPrompt(const std::string& name) const {
  std::shared_lock lock(mu_);
  for (const auto& p : prompts_)
    if (p->name == name) return p;
  return nullptr;
}

std::shared_ptr<const ResourceTemplate> Registry::MatchTemplate(const std::string& uri,
                                                                std::map<std::string, std::string>* vars) const {
  std::shared_lock lock(mu_);
  for (const auto& t : templates_)
    if (MatchUriTemplate(t->uri_template, uri, vars)) return t;
  return nullptr;
}

std::vector<std::shared_ptr<const Tool>> Registry::Tools() const {
  std::shared_lock lock(mu_);
  return tools_;
}
std::vector<std::shared_ptr<const Resource>> Registry::Resources() const {
  std::shared_lock lock(mu_);
  return resources_;
}
std::vector<std::shared_ptr<const ResourceTemplate>> Registry::ResourceTemplates() const {
  std::shared_lock lock(mu_);
  return templates_;
}
std::vector<std::shared_ptr<const Prompt>> Registry::Prompts() const {
  std::shared_lock lock(mu_);
  return prompts_;
}

int Registry::AddListener(Listener listener) {
  std::lock_guard lock(listeners_mu_);
  int id = next_listener_++;
  listeners_.emplace_back(id, std::move(listener));
  return id;
}

void Registry::RemoveListener(int id) {
  std::lock_guard lock(listeners_mu_);
  std::erase_if(listeners_, [id](const auto& p) { return p.first == id; });
}

void Registry::Notify(ListKind kind) {
  std::vector<Listener> copy;
  {
    std::lock_guard lock(listeners_mu_);
    for (const auto& [id, l] : listeners_) copy.push_back(l);
  }
  for (const auto& l : copy) l(kind);
}

int Registry::AddUpdateListener(UpdateListener listener) {
  std::lock_guard lock(listeners_mu_);
  const int id = next_listener_++;
  update_listeners_.emplace_back(id, std::move(listener));
  return id;
}

void Registry::RemoveUpdateListener(int id) {
  std::lock_guard lock(listeners_mu_);
  std::erase_if(update_listeners_, [id](const auto& p) { return p.first == id; });
}

void Registry::ResourceChanged(const std::string& uri) {
  std::vector<UpdateListener> copy;
  {
    std::lock_guard lock(listeners_mu_);
    for (const auto& [id, l] : update_listeners_) copy.push_back(l);
  }
  for (const auto& l : copy) l(uri);
}

}  // namespace mt::mcp
