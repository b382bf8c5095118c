// A tool is a name, a description, an input schema, an output schema, annotations and a
// handler, declared together (the style of the official SDKs). The dispatcher validates
// `arguments` against `input_schema` before the handler runs and `structured` against
// `output_schema` after it returns.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "mcp/json.h"

namespace mt::mcp {

class CallContext;

// MCP ToolAnnotations. Unset hints are omitted from tools/list; clients then assume the
// worst (destructive, open-world), so product tools set every hint explicitly.
struct ToolAnnotations {
  std::optional<bool> read_only;
  std::optional<bool> destructive;
  std::optional<bool> idempotent;
  std::optional<bool> open_world;

  static ToolAnnotations ReadOnly() { return {true, false, true, false}; }
  Json ToJson(const std::string& title) const;
};

struct ToolResult {
  Json content = Json::array();       // MCP content blocks
  std::optional<Json> structured;     // structuredContent
  bool is_error = false;
  Json meta;                          // optional result _meta (null = none)

  // A plain text result.
  static ToolResult Text(std::string text);
  // Structured output plus a short human summary as the text block.
  static ToolResult Structured(Json structured, std::string summary);
  // A tool execution error the model can correct (isError: true).
  static ToolResult Error(std::string message);
};

using ToolHandler = std::function<ToolResult(const Json& arguments, CallContext& ctx)>;

// Whether a call may run as a task of the Tasks extension (`io.modelcontextprotocol/tasks`,
// 2026-07-28 only; see mcp/tasks.h). The server decides per call: a tool that supports tasks
// runs as one whenever the request's client capabilities declare the extension.
enum class TaskSupport {
  kNone,       // always answered in the request (the default)
  kOptional,   // a task when the client declared the extension, else answered in the request
  kRequired,   // only as a task: a client without the extension gets -32021
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema = Json{{"type", "object"}, {"additionalProperties", false}};
  Json output_schema;                 // null = none
  ToolAnnotations annotations;
  Json meta;                          // optional tool _meta (null = none)
  // Quick handlers never block nor wait on I/O beyond a few milliseconds; the stdio
  // transport may run them on its reader thread instead of a worker.
  bool quick = false;
  // Long-running tools (sweeps, a cold start of Prometheus, anything a client would time out
  // on) declare task support; the handler is the same code either way (see CallContext).
  TaskSupport task_support = TaskSupport::kNone;
  // By default a task is created before the handler runs. With `task_on_demand`, the handler
  // first runs as part of the request (its questions travel as input_required round trips)
  // and the call becomes a task only where it calls CallContext::ContinueAsTask().
  bool task_on_demand = false;
  ToolHandler handler;

  Json ToJson() const;                // the tools/list entry
};

// The checks every call of a tool gets, wherever it comes from (the dispatcher, the CLI):
// the arguments against the input schema ("Invalid arguments: …" when they do not conform),
// and a structured result against the output schema (a result that violates it becomes an
// internal-error tool result, and the violation is reported on stderr).
std::optional<std::string> CheckToolArguments(const Tool& tool, const Json& arguments);
ToolResult CheckToolOutput(const Tool& tool, ToolResult result);

}  // namespace mt::mcp
