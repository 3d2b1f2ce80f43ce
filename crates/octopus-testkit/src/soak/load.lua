-- The soak's load, for wrk: one kind of request per run ("append", "recall"
-- or "context"), each to a target drawn at random among every tenant's
-- users, paced by delay(). Arguments after wrk's `--`:
--   kind, targets file (Lua returning {targets = {...}, texts = {...}}),
--   pause between a connection's requests (ms), the run's tag, and for
--   appends the file that acknowledged markers are appended to.
-- done() prints one line starting "SOAK " with the run's figures as JSON.

local threads = {}
local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("number", thread_count)
  table.insert(threads, thread)
end

local kind, data, pause, tag, acks
local sent = 0

function init(args)
  kind, pause, tag = args[1], tonumber(args[3]), args[4]
  data = dofile(args[2])
  if kind == "append" then
    acks = io.open(args[5], "a")
    acks:setvbuf("line")
  end
  math.randomseed(number * 7919 + os.time())
  ok, throttled, failed = 0, 0, 0
end

function delay()
  return pause
end

function request()
  local target = data.targets[math.random(#data.targets)]
  local text = data.texts[math.random(#data.texts)]
  local headers = {
    ["Authorization"] = "Bearer " .. target.key,
    ["Content-Type"] = "application/json",
  }
  if kind == "append" then
    sent = sent + 1
    local marker = string.format("soak-%s-%d-%d", tag, number, sent)
    -- text is a JSON string literal, quotes included: the marker goes inside.
    local body = '{"messages":[{"role":"user","content":"' .. marker .. " " .. text:sub(2) .. "}]}"
    return wrk.format("POST", "/v1/conversations/" .. target.conversation .. "/messages", headers, body)
  elseif kind == "recall" then
    local body = '{"user_id":"' .. target.user .. '","query":' .. text .. ',"top_k":10}'
    return wrk.format("POST", "/v1/agents/" .. target.agent .. "/recall", headers, body)
  else
    local body = '{"message":' .. text .. "}"
    return wrk.format("POST", "/v1/conversations/" .. target.conversation .. "/context", headers, body)
  end
end

function response(status, headers, body)
  if status == 429 then
    throttled = throttled + 1
  elseif status >= 200 and status < 300 then
    ok = ok + 1
    if acks then
      local marker = body:match("soak%-%w+%-%d+%-%d+")
      if marker then
        acks:write(marker, "\n")
      end
    end
  else
    failed = failed + 1
  end
end

function done(summary, latency, requests)
  local totals = { ok = 0, throttled = 0, failed = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do
      totals[name] = totals[name] + (thread:get(name) or 0)
    end
  end
  local errors = summary.errors
  io.write(string.format(
    'SOAK {"requests":%d,"seconds":%.3f,"ok":%d,"throttled":%d,"failed":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,' ..
    '"p50_ms":%.3f,"p95_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f}\n',
    summary.requests, summary.duration / 1e6, totals.ok, totals.throttled, totals.failed,
    errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50) / 1e3, latency:percentile(95) / 1e3,
    latency:percentile(99) / 1e3, latency.max / 1e3))
end
