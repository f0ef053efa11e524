/**
 * PGlite runs PostgreSQL in WebAssembly on this very thread, and its `query` resolves without
 * any I/O: a request that awaits statement after statement (a search's providers, then its
 * highlights) never leaves the microtask queue, so Node never gets back to polling sockets until
 * the whole chain pauses. Everything else in the process waits meanwhile: a request that arrived
 * a moment later is not even read, and an answer that is ready is not written.
 *
 * Measured in the browser test (docs/web-app.md, "Keystroke to first results"): the two searches of the
 * search page's `@defer` operation leave the gateway within a millisecond, but the second one
 * reached the search subgraph 50-90 ms later, after the first had run its providers, so it could
 * not join their calls (shared-provider-calls.ts) and ran every LOCAL provider's statements a
 * second time, in front of the first part's entity and highlight statements.
 *
 * The cure is a turn of the event loop (`setImmediate`, which runs after the poll phase) before
 * each statement and each transaction: sockets are read and written between statements, as they
 * are when the statements go to a PostgreSQL server. The statements themselves, their order and
 * their number are unchanged.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { PGlite, Transaction } from "@electric-sql/pglite";

/** The methods that run SQL; every other member is passed through as it is. */
const STATEMENT_METHODS = new Set<PropertyKey>(["query", "sql", "exec"]);

/** `client` (or a transaction of it), with a turn of the event loop before each statement and transaction. */
export function withEventLoopTurns<Client extends PGlite | Transaction>(client: Client): Client {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (STATEMENT_METHODS.has(property)) {
        return async (...args: unknown[]) => {
          await nextTurn();
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      }
      if (property === "transaction") {
        return async (callback: (tx: Transaction) => Promise<unknown>) => {
          await nextTurn();
          return (value as PGlite["transaction"]).call(target, (tx) => callback(withEventLoopTurns(tx)));
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}
