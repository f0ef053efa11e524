// The attacker's own process for the hostile-load scenario: POSTs a list of prepared requests
// (each its own headers and body, used in turn) with a fixed number in flight, until a time or a
// request count is reached, and reports what came back. It runs apart from bench/load-generator.mjs,
// which measures the victim, so the attack's client work takes neither the victim's measuring
// loop nor the servers' event loop.
//
// Plain JavaScript on purpose, like load-generator.mjs: it is started with bare `node`.

process.on("message", ({ id, options }) => {
  run(options).then(
    (result) => process.send({ id, ok: true, result }),
    (error) => process.send({ id, ok: false, error: String(error?.stack ?? error) }),
  );
});
process.on("disconnect", () => process.exit(0));

async function run({ url, requests, concurrency, durationMs, maxRequests, timeoutMs }) {
  const deadline = performance.now() + durationMs;
  const statuses = {};
  const codes = {};
  const latencies = [];
  let next = 0;
  let sent = 0;
  let networkErrors = 0;
  let firstError = null;
  const started = performance.now();

  async function worker() {
    while (performance.now() < deadline && sent < maxRequests) {
      const request = requests[next++ % requests.length];
      sent += 1;
      const began = performance.now();
      try {
        // A request may go elsewhere than the gateway's /graphql (its `url`: /mcp, /readyz, a subgraph),
        // and may stream its body without a Content-Length (`chunked`), as an attacker can.
        const response = await fetch(request.url ?? url, {
          method: "POST",
          headers: { "content-type": "application/json", ...request.headers },
          body: request.chunked ? chunkedBody(request.body) : request.body,
          ...(request.chunked ? { duplex: "half" } : {}),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        latencies.push(performance.now() - began);
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        // The first error code is enough to say how the attack was answered; no JSON.parse of large bodies.
        const code = /"code":"([A-Z_]+)"/.exec(text.slice(0, 4_000))?.[1] ?? (text.includes('"errors"') ? "no code" : "data");
        codes[code] = (codes[code] ?? 0) + 1;
        if (response.status >= 500) firstError ??= `HTTP ${response.status}: ${text.slice(0, 300)}`;
      } catch (error) {
        networkErrors += 1;
        firstError ??= String(error?.cause?.code ?? error?.name ?? error);
      }
    }
  }

  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  latencies.sort((a, b) => a - b);
  const at = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))] : null);
  return {
    durationSeconds: (performance.now() - started) / 1000,
    sent,
    completed: latencies.length,
    networkErrors,
    statuses,
    codes,
    latencyMs: { p50: at(50), p99: at(99) },
    firstError,
  };
}

function chunkedBody(text) {
  const bytes = Buffer.from(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + 1024 * 1024));
      offset += 1024 * 1024;
    },
  });
}
