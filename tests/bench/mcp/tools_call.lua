-- wrk script: POST a trivial tools/call in an existing legacy session and check every
-- response (status 200 and the tool's text in the body). Env: MCP_SESSION, MCP_EXPECT.
local expect = os.getenv("MCP_EXPECT") or "simple text response"
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = os.getenv("MCP_SESSION")
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"

local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total_bad = 0
  for _, t in ipairs(threads) do total_bad = total_bad + t:get("bad") end
  io.write(string.format("CHECKED requests=%d bad=%d\n", summary.requests, total_bad))
end
