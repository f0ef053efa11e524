/**
 * How the gateway reaches subgraphs over HTTP: @graphql-mesh/transport-http, with one upstream
 * defect bounded around it.
 *
 * @graphql-tools/executor-http 3.4.1 (the transport's executor) creates one long-lived dispose
 * signal per subgraph on its first call and links every later request to it with
 * @graphql-hive/signal's abortSignalAny. The listener a request adds to that signal is removed
 * only when the request's combined signal is aborted or garbage-collected, never when the request
 * ends, so the count follows requests in flight plus finished ones not yet collected: Node warns
 * (MaxListenersExceededWarning) at 11, i.e. under any real load. It is a GC-lagged cleanup, not a
 * leak. Upstream fixed the same pattern in graphql-tools' executor
 * (ardatan/graphql-tools#6789); executor-http's dispose signal has no issue of its own yet: file
 * one there with the trace from test/e2e/search-abort-listeners.test.ts when this is revisited.
 *
 * The signal is private to the executor; the one moment we can reach is its creation, inside
 * the executor's first synchronous call. That call runs with Node's default EventTarget limit
 * raised to DISPOSE_SIGNAL_MAX_LISTENERS, so that limit applies to the dispose signal (and the
 * first request's own short-lived signals) and to nothing else: every other EventTarget and
 * EventEmitter keeps Node's default, and a real pile-up past the bound still warns.
 */
import { EventEmitter } from "node:events";
import httpTransport from "@graphql-mesh/transport-http";

/** Requests in flight plus those awaiting collection that one subgraph's dispose signal may carry before Node warns. */
export const DISPOSE_SIGNAL_MAX_LISTENERS = 1_000;

type HttpTransport = typeof httpTransport;
type SubgraphExecutor = ReturnType<HttpTransport["getSubgraphExecutor"]>;

export const subgraphHttpTransport: HttpTransport = {
  ...httpTransport,
  getSubgraphExecutor(payload) {
    const executor = httpTransport.getSubgraphExecutor(payload);
    let disposeSignalCreated = false;
    const bounded = function boundedExecutor(request: Parameters<SubgraphExecutor>[0]) {
      if (disposeSignalCreated) return executor(request);
      disposeSignalCreated = true;
      const defaultLimit = EventEmitter.defaultMaxListeners;
      EventEmitter.defaultMaxListeners = DISPOSE_SIGNAL_MAX_LISTENERS;
      try {
        return executor(request);
      } finally {
        EventEmitter.defaultMaxListeners = defaultLimit;
      }
    };
    // The runtime disposes executors (on supergraph change and shutdown) through their dispose
    // symbol (Node's, or @whatwg-node/disposablestack's polyfill): carry every symbol over.
    for (const key of Object.getOwnPropertySymbols(executor)) Object.defineProperty(bounded, key, Object.getOwnPropertyDescriptor(executor, key)!);
    return bounded as SubgraphExecutor;
  },
};
