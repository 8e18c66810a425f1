-- wrk script: POSTs the bytes of the file named by the first script argument (`wrk … -- body.json`)
-- with Content-Type application/json on every request, and prints one JSON line of results at the end
-- (latencies in microseconds) so the harness never parses wrk's human-readable text.

function init(args)
  local file = assert(io.open(args[1], "rb"), "cannot open body file " .. tostring(args[1]))
  wrk.method = "POST"
  wrk.body = file:read("*a")
  file:close()
  wrk.headers["Content-Type"] = "application/json"
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
