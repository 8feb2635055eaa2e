-- wrk: the same keyed charge again and again (every answer a replay).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Customer-Id"] = "bench"
wrk.headers["Idempotency-Key"] = os.getenv("BENCH_KEY") or "bench-replay"
wrk.body = '{"amount":4200,"currency":"usd"}'
