-- Sends each pre-signed payment once (PAYMENTS: a file of PAYMENT-SIGNATURE values, one per
-- line), split between wrk's threads, and prints the same RESULT line as report.lua. A thread
-- that runs out of payments stops; unexpected (non-200) answers are counted. BODY (optional):
-- a JSON body, sent as a POST. MCP=1: each line is instead a whole MCP `tools/call` request
-- (the payment in its `_meta`), posted to the MCP server; an error result counts as unexpected.
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  payments = {}
  local nthreads = tonumber(os.getenv("THREADS") or "1")
  local n = 0
  for line in io.lines(os.getenv("PAYMENTS")) do
    if n % nthreads == id then
      table.insert(payments, line)
    end
    n = n + 1
  end
  index = 0
  unexpected = 0
end

function request()
  index = index + 1
  if index > #payments then
    wrk.thread:stop()
    index = #payments
  end
  if os.getenv("MCP") then
    return wrk.format("POST", wrk.path, { ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream", ["MCP-Protocol-Version"] = "2025-11-25" }, payments[index])
  end
  local body = os.getenv("BODY")
  if body then
    return wrk.format("POST", wrk.path, { ["PAYMENT-SIGNATURE"] = payments[index], ["Accept-Encoding"] = "gzip",
      ["Content-Type"] = "application/json" }, body)
  end
  return wrk.format("GET", wrk.path, { ["PAYMENT-SIGNATURE"] = payments[index], ["Accept-Encoding"] = "gzip" })
end

function response(status, headers, body)
  if status ~= 200 or (body and body:find('"isError":true', 1, true)) then
    unexpected = unexpected + 1
  end
end

function done(summary, latency, requests)
  local wrong = 0
  for _, t in ipairs(threads) do
    wrong = wrong + (t:get("unexpected") or 0)
  end
  io.write(string.format("RESULT %d %.0f %d %d %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99), wrong))
end
