#include "tests/conformance/fixtures.h"

#include <chrono>
#include <thread>

#include "mcp/call_context.h"
#include "mcp/json_rpc.h"

namespace mt::conformance {

using mcp::CallContext;
using mcp::InputRequest;
using mcp::ToolResult;

namespace {

// A 1×1 PNG and a 1-sample WAV: the smallest valid payloads of each type.
constexpr const char* kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
constexpr const char* kWav = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

Json Text(const std::string& t) { return {{"type", "text"}, {"text", t}}; }

mcp::Tool MakeTool(std::string name, std::string description, mcp::ToolHandler handler,
                   Json schema = Json{{"type", "object"}, {"properties", Json::object()}}) {
  mcp::Tool t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.input_schema = std::move(schema);
  t.handler = std::move(handler);
  return t;
}

Json ElicitParams(const std::string& message, const std::string& field) {
  return {{"message", message},
          {"requestedSchema",
           {{"type", "object"}, {"properties", {{field, {{"type", "string"}}}}}, {"required", {field}}}}};
}

Json SamplingParams(const std::string& prompt, int max_tokens) {
  return {{"messages", {{{"role", "user"}, {"content", Text(prompt)}}}}, {"maxTokens", max_tokens}};
}

std::string SampledText(const Json& r) {
  if (r.contains("content") && r["content"].is_object()) return r["content"].value("text", "");
  return "";
}

std::string ElicitedField(const Json& r, const std::string& field) {
  if (r.value("action", "") != "accept" || !r.contains("content") || !r["content"].is_object()) return "";
  const Json& c = r["content"];
  return c.contains(field) && c[field].is_string() ? c[field].get<std::string>() : "";
}

void RegisterContentTools(mcp::Registry& r) {
  mcp::Tool simple = MakeTool("test_simple_text", "Returns a simple text response", [](const Json&, CallContext&) {
    return ToolResult::Text("This is a simple text response for testing.");
  });
  simple.quick = true;   // answered on the I/O thread: it never blocks
  r.AddTool(std::move(simple));
  r.AddTool(MakeTool("test_image_content", "Returns a base64 PNG image", [](const Json&, CallContext&) {
    ToolResult res;
    res.content.push_back({{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}});
    return res;
  }));
  r.AddTool(MakeTool("test_audio_content", "Returns a base64 WAV audio clip", [](const Json&, CallContext&) {
    ToolResult res;
    res.content.push_back({{"type", "audio"}, {"data", kWav}, {"mimeType", "audio/wav"}});
    return res;
  }));
  r.AddTool(MakeTool("test_embedded_resource", "Returns an embedded text resource", [](const Json&, CallContext&) {
    ToolResult res;
    res.content.push_back({{"type", "resource"},
                           {"resource",
                            {{"uri", "test://embedded-resource"},
                             {"mimeType", "text/plain"},
                             {"text", "This is an embedded resource content."}}}});
    return res;
  }));
  r.AddTool(MakeTool("test_multiple_content_types", "Returns text, an image and a resource together",
                     [](const Json&, CallContext&) {
                       ToolResult res;
                       res.content.push_back(Text("Multiple content types test:"));
                       res.content.push_back({{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}});
                       res.content.push_back({{"type", "resource"},
                                              {"resource",
                                               {{"uri", "test://mixed-content-resource"},
                                                {"mimeType", "application/json"},
                                                {"text", "{\"test\":\"data\",\"value\":123}"}}}});
                       return res;
                     }));
  r.AddTool(MakeTool("test_error_handling", "Always fails with a tool execution error", [](const Json&, CallContext&) {
    return ToolResult::Error("This tool intentionally returns an error for testing");
  }));
  Json schema_2020 = Json::parse(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
 "$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
 "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
 "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
 "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
 "then":{"required":["phone"]},"else":{"required":["email"]},
 "additionalProperties":false})");
  r.AddTool(MakeTool(
      "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
      [](const Json& args, CallContext&) { return ToolResult::Text("Accepted: " + args.dump()); }, schema_2020));
}

void RegisterStreamingTools(mcp::Registry& r) {
  r.AddTool(MakeTool("test_tool_with_logging", "Logs three info messages while it runs",
                     [](const Json&, CallContext& ctx) {
                       ctx.Log(mcp::LogLevel::kInfo, "Tool execution started");
                       Sleep(50);
                       ctx.Log(mcp::LogLevel::kInfo, "Tool processing data");
                       Sleep(50);
                       ctx.Log(mcp::LogLevel::kInfo, "Tool execution completed");
                       return ToolResult::Text("Tool with logging executed successfully");
                     }));
  r.AddTool(MakeTool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100",
                     [](const Json&, CallContext& ctx) {
                       for (int step = 0; step <= 100; step += 50) {
                         ctx.ReportProgress(step, 100, "Completed step " + std::to_string(step) + " of 100");
                         if (step < 100) Sleep(50);
                       }
                       return ToolResult::Text("Progress test completed");
                     }));
  r.AddTool(MakeTool(
      "test_sampling", "Asks the client's LLM to answer a prompt",
      [](const Json& args, CallContext& ctx) {
        Json answer = ctx.AskClient({"sampling", "sampling/createMessage", SamplingParams(args.value("prompt", ""), 100)});
        return ToolResult::Text("LLM response: " + SampledText(answer));
      },
      {{"type", "object"}, {"properties", {{"prompt", {{"type", "string"}}}}}, {"required", {"prompt"}}}));
  r.AddTool(MakeTool(
      "test_elicitation", "Asks the user for a username and an email address",
      [](const Json& args, CallContext& ctx) {
        Json params = {{"message", args.value("message", "")},
                       {"requestedSchema",
                        {{"type", "object"},
                         {"properties",
                          {{"username", {{"type", "string"}, {"description", "User's response"}}},
                           {"email", {{"type", "string"}, {"description", "User's email address"}}}}},
                         {"required", {"username", "email"}}}}};
        Json answer = ctx.AskClient({"user", "elicitation/create", params});
        return ToolResult::Text("User response: action=" + answer.value("action", "") +
                                ", content=" + answer.value("content", Json::object()).dump());
      },
      {{"type", "object"}, {"properties", {{"message", {{"type", "string"}}}}}, {"required", {"message"}}}));
  r.AddTool(MakeTool("test_elicitation_sep1034_defaults", "Elicits a form whose fields carry defaults",
                     [](const Json&, CallContext& ctx) {
                       Json props = {
                           {"name", {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
                           {"age", {{"type", "integer"}, {"description", "User age"}, {"default", 30}}},
                           {"score", {{"type", "number"}, {"description", "User score"}, {"default", 95.5}}},
                           {"status",
                            {{"type", "string"},
                             {"description", "User status"},
                             {"enum", {"active", "inactive", "pending"}},
                             {"default", "active"}}},
                           {"verified", {{"type", "boolean"}, {"description", "Verification status"}, {"default", true}}}};
                       Json params = {{"mode", "form"},
                                      {"message", "Please review and update the form fields with defaults"},
                                      {"requestedSchema", {{"type", "object"}, {"properties", props}, {"required", Json::array()}}}};
                       Json answer = ctx.AskClient({"defaults", "elicitation/create", params});
                       return ToolResult::Text("Elicitation completed: action=" + answer.value("action", "") +
                                               ", content=" + answer.value("content", Json::object()).dump());
                     }));
  r.AddTool(MakeTool("test_elicitation_sep1330_enums", "Elicits the five enum shapes of SEP-1330",
                     [](const Json&, CallContext& ctx) {
                       auto titled = [](const char* prefix) {
                         Json list = Json::array();
                         const char* names[] = {"First", "Second", "Third"};
                         for (int i = 0; i < 3; ++i)
                           list.push_back({{"const", "value" + std::to_string(i + 1)},
                                           {"title", std::string(names[i]) + " " + prefix}});
                         return list;
                       };
                       Json props = {
                           {"untitledSingle", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}},
                           {"titledSingle", {{"type", "string"}, {"oneOf", titled("Option")}}},
                           {"legacyEnum",
                            {{"type", "string"},
                             {"enum", {"opt1", "opt2", "opt3"}},
                             {"enumNames", {"Option One", "Option Two", "Option Three"}}}},
                           {"untitledMulti",
                            {{"type", "array"},
                             {"minItems", 1},
                             {"maxItems", 3},
                             {"items", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}}}},
                           {"titledMulti",
                            {{"type", "array"}, {"minItems", 1}, {"maxItems", 3}, {"items", {{"anyOf", titled("Choice")}}}}}};
                       Json params = {{"message", "Please select options from the enum fields"},
                                      {"requestedSchema", {{"type", "object"}, {"properties", props}, {"required", Json::array()}}}};
                       Json answer = ctx.AskClient({"enums", "elicitation/create", params});
                       return ToolResult::Text("Elicitation completed: action=" + answer.value("action", "") +
                                               ", content=" + answer.value("content", Json::object()).dump());
                     }));
}

void RegisterStatelessProbes(mcp::Registry& r) {
  r.AddTool(MakeTool("test_missing_capability", "Needs the client's sampling capability",
                     [](const Json&, CallContext& ctx) {
                       if (!ctx.ClientCan("sampling/createMessage"))
                         throw mcp::RpcError(mcp::kMissingRequiredClientCapability,
                                             "this tool needs the client capability 'sampling'",
                                             Json{{"requiredCapabilities", {{"sampling", Json::object()}}}});
                       return ToolResult::Text("Sampling capability is declared");
                     }));
  r.AddTool(MakeTool("test_streaming_elicitation", "Asks the user to confirm (input_required in 2026-07-28)",
                     [](const Json&, CallContext& ctx) {
                       Json params = {{"message", "Please confirm"},
                                      {"requestedSchema",
                                       {{"type", "object"},
                                        {"properties", {{"ok", {{"type", "boolean"}}}}},
                                        {"required", {"ok"}}}}};
                       Json answer = ctx.AskClient({"confirm", "elicitation/create", params});
                       return ToolResult::Text("Confirmation: " + answer.value("action", ""));
                     }));
  r.AddTool(MakeTool("test_logging_tool", "Logs one message, only if the request asked for logs",
                     [](const Json&, CallContext& ctx) {
                       ctx.Log(mcp::LogLevel::kInfo, "logging tool ran");
                       return ToolResult::Text("Logging tool completed");
                     }));
  r.AddTool(MakeTool("test_trigger_tool_change", "Changes the tool list (fires tools list_changed)",
                     [&r](const Json&, CallContext&) {
                       r.AddTool(MakeTool("test_dynamic_tool", "A tool that appears at run time",
                                          [](const Json&, CallContext&) { return ToolResult::Text("dynamic"); }));
                       return ToolResult::Text("Tool list changed");
                     }));
  r.AddTool(MakeTool("test_trigger_prompt_change", "Changes the prompt list (fires prompts list_changed)",
                     [&r](const Json&, CallContext&) {
                       mcp::Prompt p;
                       p.name = "test_dynamic_prompt";
                       p.description = "A prompt that appears at run time";
                       p.handler = [](const auto&, CallContext&) {
                         mcp::PromptResult res;
                         res.messages.push_back({{"role", "user"}, {"content", Text("dynamic")}});
                         return res;
                       };
                       r.AddPrompt(std::move(p));
                       return ToolResult::Text("Prompt list changed");
                     }));
}

void RegisterMultiRoundTools(mcp::Registry& r) {
  r.AddTool(MakeTool("test_input_required_result_elicitation", "Asks the user's name via input_required",
                     [](const Json&, CallContext& ctx) {
                       Json a = ctx.AskClient({"user_name", "elicitation/create", ElicitParams("What is your name?", "name")});
                       return ToolResult::Text("Hello, " + ElicitedField(a, "name") + "!");
                     }));
  r.AddTool(MakeTool("test_input_required_result_sampling", "Asks the client's LLM via input_required",
                     [](const Json&, CallContext& ctx) {
                       Json a = ctx.AskClient({"capital_question", "sampling/createMessage",
                                               SamplingParams("What is the capital of France?", 100)});
                       return ToolResult::Text("Sampled: " + SampledText(a));
                     }));
  r.AddTool(MakeTool("test_input_required_result_list_roots", "Asks the client's roots via input_required",
                     [](const Json&, CallContext& ctx) {
                       Json a = ctx.AskClient({"client_roots", "roots/list", Json::object()});
                       return ToolResult::Text("Roots: " + a["roots"].dump());
                     }));
  r.AddTool(MakeTool("test_input_required_result_request_state", "Round trip that carries requestState",
                     [](const Json&, CallContext& ctx) {
                       ctx.set_round_state({{"asked", "confirm"}});
                       Json params = {{"message", "Please confirm"},
                                      {"requestedSchema",
                                       {{"type", "object"}, {"properties", {{"ok", {{"type", "boolean"}}}}}, {"required", {"ok"}}}}};
                       ctx.AskClient({"confirm", "elicitation/create", params});
                       return ToolResult::Text("state-ok");
                     }));
  r.AddTool(MakeTool("test_input_required_result_multiple_inputs", "Asks three things in one round",
                     [](const Json&, CallContext& ctx) {
                       ctx.set_round_state({{"round", 1}});
                       auto answers = ctx.AskClientAll(
                           {{"user_name", "elicitation/create", ElicitParams("What is your name?", "name")},
                            {"greeting", "sampling/createMessage", SamplingParams("Generate a greeting", 50)},
                            {"client_roots", "roots/list", Json::object()}});
                       return ToolResult::Text(SampledText(answers["greeting"]) + " " +
                                               ElicitedField(answers["user_name"], "name"));
                     }));
  r.AddTool(MakeTool("test_input_required_result_multi_round", "Two questions in two rounds",
                     [](const Json&, CallContext& ctx) {
                       ctx.set_round_state({{"round", 1}});
                       Json a = ctx.AskClient({"step1", "elicitation/create", ElicitParams("Step 1: What is your name?", "name")});
                       std::string name = ElicitedField(a, "name");
                       ctx.set_round_state({{"round", 2}, {"name", name}});
                       Json b = ctx.AskClient(
                           {"step2", "elicitation/create", ElicitParams("Step 2: What is your favorite color?", "color")});
                       return ToolResult::Text(name + " likes " + ElicitedField(b, "color"));
                     }));
  r.AddTool(MakeTool("test_input_required_result_tampered_state", "Rejects a modified requestState",
                     [](const Json&, CallContext& ctx) {
                       ctx.set_round_state({{"round", 1}});
                       ctx.AskClient({"confirm", "elicitation/create", ElicitParams("Please confirm", "ok")});
                       return ToolResult::Text("state verified");
                     }));
  r.AddTool(MakeTool("test_input_required_result_capabilities", "Asks only what the client declared",
                     [](const Json&, CallContext& ctx) {
                       if (ctx.ClientCan("elicitation/create")) {
                         ctx.AskClient({"q", "elicitation/create", ElicitParams("What is your name?", "name")});
                       } else if (ctx.ClientCan("sampling/createMessage")) {
                         ctx.AskClient({"q", "sampling/createMessage", SamplingParams("Say hello", 20)});
                       } else if (ctx.ClientCan("roots/list")) {
                         ctx.AskClient({"q", "roots/list", Json::object()});
                       }
                       return ToolResult::Text("nothing could be asked");
                     }));
}

void RegisterResources(mcp::Registry& r) {
  auto text_resource = [](std::string uri, std::string name, std::string text, bool subscribable = false) {
    mcp::Resource res;
    res.uri = uri;
    res.name = std::move(name);
    res.description = "Conformance fixture resource";
    res.mime_type = "text/plain";
    res.subscribable = subscribable;
    res.read = [uri, text](const std::string&, CallContext&) {
      return std::vector<mcp::ResourceContents>{{uri, "text/plain", text, std::nullopt}};
    };
    return res;
  };
  r.AddResource(text_resource("test://static-text", "static-text", "This is the content of the static text resource."));
  mcp::Resource bin;
  bin.uri = "test://static-binary";
  bin.name = "static-binary";
  bin.description = "A PNG image";
  bin.mime_type = "image/png";
  bin.read = [](const std::string& uri, CallContext&) {
    return std::vector<mcp::ResourceContents>{{uri, "image/png", std::nullopt, std::string(kPng)}};
  };
  r.AddResource(std::move(bin));
  r.AddResource(text_resource("test://watched-resource", "watched-resource", "Watched resource content", true));

  mcp::ResourceTemplate t;
  t.uri_template = "test://template/{id}/data";
  t.name = "template";
  t.description = "Data for an id";
  t.mime_type = "application/json";
  t.read = [](const std::string& uri, const std::map<std::string, std::string>& vars, CallContext&) {
    std::string id = vars.at("id");
    Json body = {{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
    return std::vector<mcp::ResourceContents>{{uri, "application/json", body.dump(), std::nullopt}};
  };
  r.AddResourceTemplate(std::move(t));
}

mcp::PromptResult Messages(Json messages) {
  mcp::PromptResult p;
  p.messages = std::move(messages);
  return p;
}

void RegisterPrompts(mcp::Registry& r) {
  mcp::Prompt simple;
  simple.name = "test_simple_prompt";
  simple.description = "A prompt without arguments";
  simple.handler = [](const auto&, CallContext&) {
    return Messages({{{"role", "user"}, {"content", Text("This is a simple prompt for testing.")}}});
  };
  r.AddPrompt(std::move(simple));

  mcp::Prompt with_args;
  with_args.name = "test_prompt_with_arguments";
  with_args.description = "A prompt with two required arguments";
  with_args.arguments = {{"arg1", "First argument", true}, {"arg2", "Second argument", true}};
  with_args.handler = [](const std::map<std::string, std::string>& a, CallContext&) {
    return Messages({{{"role", "user"},
                      {"content", Text("Prompt with arguments: arg1='" + a.at("arg1") + "', arg2='" + a.at("arg2") + "'")}}});
  };
  with_args.complete = [](const std::string& arg, const std::string& prefix, const auto&) {
    std::vector<std::string> out;
    for (const char* v : {"testValue1", "testValue2", "other"})
      if (arg.rfind("arg", 0) == 0 && std::string(v).rfind(prefix, 0) == 0) out.push_back(v);
    return out;
  };
  r.AddPrompt(std::move(with_args));

  mcp::Prompt embedded;
  embedded.name = "test_prompt_with_embedded_resource";
  embedded.description = "A prompt that embeds a resource";
  embedded.arguments = {{"resourceUri", "URI of the resource to embed", true}};
  embedded.handler = [](const std::map<std::string, std::string>& a, CallContext&) {
    return Messages({{{"role", "user"},
                      {"content",
                       {{"type", "resource"},
                        {"resource",
                         {{"uri", a.at("resourceUri")}, {"mimeType", "text/plain"}, {"text", "Embedded resource content for testing."}}}}}},
                     {{"role", "user"}, {"content", Text("Please process the embedded resource above.")}}});
  };
  r.AddPrompt(std::move(embedded));

  mcp::Prompt image;
  image.name = "test_prompt_with_image";
  image.description = "A prompt with an image";
  image.handler = [](const auto&, CallContext&) {
    Json image_block = {{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}};
    return Messages({{{"role", "user"}, {"content", image_block}},
                     {{"role", "user"}, {"content", Text("Please analyze the image above.")}}});
  };
  r.AddPrompt(std::move(image));

  mcp::Prompt mrtr;
  mrtr.name = "test_input_required_result_prompt";
  mrtr.description = "A prompt that first asks the user for context (input_required)";
  mrtr.handler = [](const auto&, CallContext& ctx) {
    Json a = ctx.AskClient({"user_context", "elicitation/create", ElicitParams("What context should the prompt use?", "context")});
    return Messages({{{"role", "user"}, {"content", Text("Use this context: " + ElicitedField(a, "context"))}}});
  };
  r.AddPrompt(std::move(mrtr));
}

// Sleeps `ms` in short slices; false when the call was cancelled meanwhile.
bool SleepUnlessCancelled(int64_t ms, CallContext& ctx) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (ctx.cancelled()) return false;
    Sleep(20);
  }
  return !ctx.cancelled();
}

Json Schema(Json properties, Json required = Json::array()) {
  Json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

// The Tasks extension scenarios (tasks-*): a sync tool, task-supporting ones, one that
// needs a task, one that asks before it becomes a task.
void RegisterTaskTools(mcp::Registry& r) {
  r.AddTool(MakeTool("greet", "Greets by name; always answered in the request",
                     [](const Json& a, CallContext&) { return ToolResult::Text("Hello, " + a.value("name", "") + "!"); },
                     Schema({{"name", {{"type", "string"}}}}, {"name"})));

  mcp::Tool slow = MakeTool(
      "slow_compute", "Sleeps `seconds`, then answers; runs as a task when the client supports tasks",
      [](const Json& a, CallContext& ctx) {
        double secs = a.value("seconds", 1.0);
        std::string label = a.value("label", "");
        if (!SleepUnlessCancelled(int64_t(secs * 1000), ctx)) return ToolResult::Error("slow_compute " + label + " cancelled");
        for (int i = 1; i <= 3; ++i) ctx.ReportProgress(i, 3, "step " + std::to_string(i));
        return ToolResult::Text("slow_compute " + label + " finished after " + std::to_string(int64_t(secs)) + "s");
      },
      Schema({{"seconds", {{"type", "number"}, {"minimum", 0}, {"maximum", 3600}}}, {"label", {{"type", "string"}}}}));
  slow.task_support = mcp::TaskSupport::kOptional;
  r.AddTool(std::move(slow));

  mcp::Tool failing = MakeTool("failing_job", "Fails with a tool execution error after about a second; only as a task",
                               [](const Json&, CallContext& ctx) {
                                 SleepUnlessCancelled(1000, ctx);
                                 return ToolResult::Error("failing_job always fails (a tool execution error)");
                               });
  failing.task_support = mcp::TaskSupport::kRequired;
  r.AddTool(std::move(failing));

  mcp::Tool proto = MakeTool("protocol_error_job", "Fails with a JSON-RPC internal error (a protocol-level failure)",
                             [](const Json&, CallContext& ctx) -> ToolResult {
                               SleepUnlessCancelled(200, ctx);
                               throw mcp::RpcError(mcp::kInternalError, "protocol_error_job: simulated internal failure");
                             });
  proto.task_support = mcp::TaskSupport::kOptional;
  r.AddTool(std::move(proto));

  mcp::Tool confirm = MakeTool(
      "confirm_delete", "Asks the user to confirm deleting a file, then answers",
      [](const Json& a, CallContext& ctx) {
        std::string file = a.value("filename", "");
        Json schema = {{"type", "object"}, {"properties", {{"confirm", {{"type", "boolean"}}}}}, {"required", {"confirm"}}};
        Json answer = ctx.AskClient({"confirm_delete", "elicitation/create",
                                     {{"message", "Delete " + file + "?"}, {"requestedSchema", schema}}});
        bool yes = answer.value("action", "") == "accept" && answer.contains("content") && answer["content"].is_object() &&
                   answer["content"].value("confirm", false);
        return ToolResult::Text(yes ? "Deleted " + file : "Kept " + file);
      },
      Schema({{"filename", {{"type", "string"}}}}));
  confirm.task_support = mcp::TaskSupport::kOptional;
  r.AddTool(std::move(confirm));

  mcp::Tool multi = MakeTool(
      "multi_input", "Asks two questions at once, then answers",
      [](const Json&, CallContext& ctx) {
        Json schema = {{"type", "object"},
                       {"properties", {{"name", {{"type", "string"}}}, {"confirm", {{"type", "boolean"}}}}}};
        auto answers = ctx.AskClientAll(
            {{"first", "elicitation/create", {{"message", "First question"}, {"requestedSchema", schema}}},
             {"second", "elicitation/create", {{"message", "Second question"}, {"requestedSchema", schema}}}});
        return ToolResult::Text("first: " + ElicitedField(answers["first"], "name") +
                                ", second: " + ElicitedField(answers["second"], "name"));
      });
  multi.task_support = mcp::TaskSupport::kOptional;
  r.AddTool(std::move(multi));

  // Multi round trip first, then a task (tasks-mrtr-composition).
  mcp::Tool composed = MakeTool(
      "test_tool_with_task", "Asks the user's name (input_required), then continues as a task",
      [](const Json&, CallContext& ctx) {
        Json a = ctx.AskClient({"user_name", "elicitation/create", ElicitParams("What is your name?", "name")});
        std::string name = ElicitedField(a, "name");
        ctx.ContinueAsTask();
        if (!SleepUnlessCancelled(300, ctx)) return ToolResult::Error("cancelled");
        return ToolResult::Text("Hello, " + name + "! (answered by a task)");
      });
  composed.task_support = mcp::TaskSupport::kRequired;
  composed.task_on_demand = true;
  r.AddTool(std::move(composed));
}

// http-custom-header-server-validation: a parameter mirrored into Mcp-Param-Region.
void RegisterCustomHeaderTool(mcp::Registry& r) {
  r.AddTool(MakeTool("test_custom_header", "Echoes a region that HTTP clients also send as Mcp-Param-Region",
                     [](const Json& a, CallContext&) { return ToolResult::Text("region=" + a.value("region", "")); },
                     Schema({{"region", {{"type", "string"}, {"description", "Where to run"}, {"x-mcp-header", "Region"}}},
                             {"query", {{"type", "string"}}}},
                            {"region"})));
}

}  // namespace

void RegisterFixtures(mcp::Registry& registry) {
  RegisterContentTools(registry);
  RegisterStreamingTools(registry);
  RegisterStatelessProbes(registry);
  RegisterMultiRoundTools(registry);
  RegisterResources(registry);
  RegisterPrompts(registry);
  RegisterTaskTools(registry);
  RegisterCustomHeaderTool(registry);
}

}  // namespace mt::conformance
