/**
 * Preloaded (`node --import ./test/support/held-database.mjs scripts/run.mjs scripts/start-subgraph.ts …`)
 * into a subgraph process that a test starts the way production does: a database that is slow
 * on the test's word. While the parent holds it (IPC message `{ hold: true }`), every statement
 * sent to PGlite waits before it runs, and the parent hears how many are waiting (`{ held: n }`)
 * and how many POST requests the process has received since the hold began (`{ received: n }`);
 * `{ hold: false }` lets them all run, for real, in the order they came. Nothing else changes.
 *
 * Both counts matter because statements are not requests: the product shares some reads between
 * requests in flight (brief-cache.ts), so 200 requests may wait on one held statement.
 *
 * Plain JavaScript, like the compiled product it is preloaded into: worker threads inherit the
 * preload too. Only the main thread holds anything.
 */
import { isMainThread } from "node:worker_threads";

if (isMainThread) {
  const { PGlite } = await import("@electric-sql/pglite");
  const http = await import("node:http");
  let holding = false;
  let held = 0;
  let received = 0;
  let release = () => undefined;
  let released = Promise.resolve();

  process.on("message", (message) => {
    if (message.hold === true && !holding) {
      holding = true;
      held = 0;
      received = 0;
      released = new Promise((resolve) => (release = resolve));
    } else if (message.hold === false && holding) {
      holding = false;
      release();
    }
  });
  // The channel must not keep a process alive that the signal path is meant to end.
  process.channel?.unref();

  // Every request the server receives passes through its "request" event (headers parsed).
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, request, ...rest) {
    if (event === "request" && holding && request.method === "POST") {
      received += 1;
      process.send?.({ received });
    }
    return emit.call(this, event, request, ...rest);
  };

  for (const name of ["query", "exec", "transaction"]) {
    const original = PGlite.prototype[name];
    PGlite.prototype[name] = async function (...args) {
      if (holding) {
        held += 1;
        process.send?.({ held });
        await released;
      }
      return original.apply(this, args);
    };
  }
}
