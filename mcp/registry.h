// The server's catalogue: tools, resources, resource templates and prompts. Thread-safe;
// entries may be added or removed while serving (listeners learn of it, which is how
// `notifications/*/list_changed` are produced). Listing order is registration order.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "mcp/prompt.h"
#include "mcp/resource.h"
#include "mcp/tool.h"

namespace mt::mcp {

enum class ListKind { kTools, kResources, kPrompts };

// Owned by a shared_ptr (the server's), so that work that outlives a call — a background
// watch — can hold it weakly and tell subscribers of a change only while it exists.
class Registry : public std::enable_shared_from_this<Registry> {
 public:
  using Listener = std::function<void(ListKind)>;
  using UpdateListener = std::function<void(const std::string& uri)>;

  void AddTool(Tool tool);                 // replaces a tool of the same name
  bool RemoveTool(const std::string& name);
  void AddResource(Resource resource);
  void AddResourceTemplate(ResourceTemplate resource_template);
  void AddPrompt(Prompt prompt);

  std::shared_ptr<const Tool> FindTool(const std::string& name) const;
  std::shared_ptr<const Resource> FindResource(const std::string& uri) const;
  std::shared_ptr<const Prompt> FindPrompt(const std::string& name) const;
  // First template matching `uri`, with its variables.
  std::shared_ptr<const ResourceTemplate> MatchTemplate(const std::string& uri,
                                                         std::map<std::string, std::string>* vars) const;

  std::vector<std::shared_ptr<const Tool>> Tools() const;
  std::vector<std::shared_ptr<const Resource>> Resources() const;
  std::vector<std::shared_ptr<const ResourceTemplate>> ResourceTemplates() const;
  std::vector<std::shared_ptr<const Prompt>> Prompts() const;

  // Returns an id for RemoveListener. Listeners run on the thread that changed the registry.
  int AddListener(Listener listener);
  void RemoveListener(int id);

  // A resource's content changed (not the catalogue): update listeners learn of it, which is
  // how subscribers get `notifications/resources/updated`.
  void ResourceChanged(const std::string& uri);
  int AddUpdateListener(UpdateListener listener);
  void RemoveUpdateListener(int id);

 private:
  void Notify(ListKind kind);

  mutable std::shared_mutex mu_;
  std::vector<std::shared_ptr<const Tool>> tools_;
  std::vector<std::shared_ptr<const Resource>> resources_;
  std::vector<std::shared_ptr<const ResourceTemplate>> templates_;
  std::vector<std::shared_ptr<const Prompt>> prompts_;

  std::mutex listeners_mu_;
  int next_listener_ = 1;
  std::vector<std::pair<int, Listener>> listeners_;
  std::vector<std::pair<int, UpdateListener>> update_listeners_;
};

}  // namespace mt::mcp
