// The load generator's own process: autocannon against one URL, POSTing GraphQL bodies taken
// round-robin from a list. It runs in a child process (bench/load.ts forks it) so that its CPU
// and memory are not the measured process's: the servers under test get the main event loop
// to themselves, and the soak's resident-memory figure is the servers' alone.
//
// Plain JavaScript on purpose: the child is started with bare `node` (no TypeScript loader), so
// it works the same under `npm run bench` (tsx) and under Jest.
import autocannon from "autocannon";

// One process serves every run of a benchmark (starting one costs ~0.7 s, mostly loading
// autocannon): each message is a run, answered with the same id. It ends with its parent.
process.on("message", ({ id, options }) => {
  run(options).then(
    (result) => process.send({ id, ok: true, result }),
    (error) => process.send({ id, ok: false, error: String(error?.stack ?? error) }),
  );
});
process.on("disconnect", () => process.exit(0));

async function run({ url, headers, bodies, connections, duration, amount, timeoutSeconds }) {
  let next = 0;
  let graphqlErrors = 0;
  let degraded = 0;
  let hits = 0;
  let withHits = 0;
  let firstError = null;
  const latencies = [];
  const instance = autocannon({
    url,
    method: "POST",
    connections,
    ...(amount ? { amount } : { duration }),
    timeout: timeoutSeconds,
    headers: { "content-type": "application/json", ...headers },
    requests: [
      {
        // Bodies rotate across all connections, so N distinct queries are all asked even at 1 connection.
        setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }),
        onResponse: (status, body) => {
          // A top-level "errors" key (quotes inside JSON strings are escaped, so this cannot match
          // text inside a title) means the GraphQL request failed, even with HTTP 200.
          if (body.includes('"errors"')) {
            graphqlErrors += 1;
            firstError ??= `HTTP ${status}: ${body.slice(0, 600)}`;
          }
          // Search hits returned (every hit has a score; nothing else in these documents does).
          const found = body.split('"score":').length - 1;
          hits += found;
          if (found > 0) withHits += 1;
          // A provider that failed or timed out degrades a search without failing it.
          if (body.includes('"status":"ERROR"') || body.includes('"status":"TIMEOUT"')) {
            degraded += 1;
            firstError ??= `degraded search: ${body.slice(0, 600)}`;
          }
        },
      },
    ],
  });
  // autocannon's own histogram keeps whole milliseconds; cache hits take well under one.
  instance.on("response", (_client, _status, _bytes, responseTimeMs) => latencies.push(responseTimeMs));
  const result = await instance;
  return {
    durationSeconds: result.duration,
    completed: latencies.length,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodeStats: result.statusCodeStats,
    graphqlErrors,
    degraded,
    hits,
    withHits,
    firstError,
    latencies,
  };
}
