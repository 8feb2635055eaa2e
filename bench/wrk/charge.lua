-- wrk: a new key on every request (every answer a new charge, or order), to the URL's path.
local counter = 0
local prefix = ""
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  prefix = string.format("bench-%d-%d-%d", os.time(), id or 0, math.random(1, 1e9))
end

function request()
  counter = counter + 1
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["X-Customer-Id"] = "bench",
    ["Idempotency-Key"] = prefix .. "-" .. counter,
  }, '{"amount":4200,"currency":"usd"}')
end

function response(status, headers, body)
  if status ~= 201 then
    io.stderr:write("unexpected status " .. status .. "\n")
  end
end
