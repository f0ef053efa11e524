/**
 * How the gateway reaches subgraphs over HTTP: @graphql-mesh/transport-http, with one upstream
 * defect bounded around it.
 *
 * @graphql-tools/executor-http 3.4.1 (the transport's executor) creates one long-lived dispose
 * signal per subgraph on its first call and links every later request to it with
 * @graphql-hive/signal's abortSignalAny. The listener a request adds to that signal is removed
 * only when the request's combined signal is aborted or garbage-collected, never when the request
 * ends. Collection is not prompt: a request that outlives two scavenges (any request of a busy
 * gateway) is promoted and waits for a full collection, so the pile followed requests since the
 * last one: 1,000 listeners within a minute at 70 searches a second (the search-features bench
 * through the gateway warned), each one making the next add and remove walk a longer list.
 * Upstream fixed the same pattern in graphql-tools' executor (ardatan/graphql-tools#6789);
 * executor-http's dispose signal has no issue of its own yet.
 *
 * So each request gets a signal of ours beside the caller's (AbortSignal.any: Node keeps no
 * listener on the sources), aborted once the request's answer is in: the combined signal then
 * aborts and abortSignalAny removes its listeners at once. By then nothing listens that could
 * act on it: Node's HTTP client drops its abort listener when the exchange ends, and the body has
 * been read (a streamed answer, an async iterable, is left to collection as before). The keep-alive
 * connection stays open (test/integration/subgraph-transport.test.ts counts connections).
 *
 * What remains on the dispose signal is one listener per request in flight. Node warns
 * (MaxListenersExceededWarning) at 11, i.e. under any real load, so the executor's first
 * synchronous call, the moment the signal is created, runs with Node's default EventTarget limit
 * raised to DISPOSE_SIGNAL_MAX_LISTENERS: that limit applies to the dispose signal (and the
 * first request's own short-lived signals) and to nothing else, and more requests in flight to
 * one subgraph than that still warn.
 */
import { EventEmitter } from "node:events";
import httpTransport from "@graphql-mesh/transport-http";

/** Requests in flight to one subgraph that its dispose signal may carry before Node warns. */
export const DISPOSE_SIGNAL_MAX_LISTENERS = 1_000;

/** Why a request's own signal is aborted: its answer is in, nothing is cancelled. */
const REQUEST_ANSWERED = new Error("the subgraph request was answered");

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as { then?: unknown } | null)?.then === "function";

type HttpTransport = typeof httpTransport;
type SubgraphExecutor = ReturnType<HttpTransport["getSubgraphExecutor"]>;

export const subgraphHttpTransport: HttpTransport = {
  ...httpTransport,
  getSubgraphExecutor(payload) {
    const executor = httpTransport.getSubgraphExecutor(payload);
    let disposeSignalCreated = false;
    const bounded = function boundedExecutor(request: Parameters<SubgraphExecutor>[0]) {
      const answered = new AbortController();
      const callerSignal = request.signal ?? request.info?.signal;
      const signal = callerSignal ? AbortSignal.any([callerSignal, answered.signal]) : answered.signal;
      const settle = <T>(result: T): T => {
        if (!(typeof result === "object" && result !== null && Symbol.asyncIterator in result)) answered.abort(REQUEST_ANSWERED);
        return result;
      };
      const result = call(executor, { ...request, signal });
      // A thenable, not always a Promise: @whatwg-node/promise-helpers answers with its own.
      if (!isThenable(result)) return settle(result);
      return Promise.resolve(result).then(settle, (error: unknown) => {
        answered.abort(REQUEST_ANSWERED);
        throw error;
      });
    };
    const call = (run: SubgraphExecutor, request: Parameters<SubgraphExecutor>[0]) => {
      if (disposeSignalCreated) return run(request);
      disposeSignalCreated = true;
      const defaultLimit = EventEmitter.defaultMaxListeners;
      EventEmitter.defaultMaxListeners = DISPOSE_SIGNAL_MAX_LISTENERS;
      try {
        return run(request);
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
