-- Prints one machine-readable line after a wrk run: requests, req/s, p50 and p99 in µs, and
-- how many answers had an unexpected status (EXPECT, default 402). With BODY set, each request
-- is a POST of that JSON, with AUTH (if set) as its Authorization header.
local threads = {}
local expect = tonumber(os.getenv("EXPECT") or "402")

if os.getenv("BODY") then
  wrk.method = "POST"
  wrk.body = os.getenv("BODY")
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = os.getenv("AUTH")
end

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  unexpected = 0
end

function response(status, headers, body)
  if status ~= expect then
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
