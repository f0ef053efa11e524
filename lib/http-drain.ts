/**
 * Graceful drain of a `node:http` server, shared by the gateway and every subgraph: stop
 * listening (new connections are refused), let the requests already received finish, answer
 * requests that arrive after the drain began with a retryable SHUTTING_DOWN (HTTP 503,
 * `Retry-After`, `Connection: close`), close each keep-alive connection after its next response,
 * and at the deadline answer whatever has not started its response with SHUTTING_DOWN too. The
 * only requests a drain ever cuts are responses already streaming when the deadline passes.
 *
 * Why not `server.close()` alone: since Node 19 it also closes idle keep-alive connections at
 * once, so a load balancer's persistent connection never sees readiness turn 503, and it has no
 * deadline. Why not Apollo's drain plugin: it ends a connection whose request has not been parsed
 * yet (a reset for that client), its grace period is not ours to configure, and the gateway has no
 * Apollo Server.
 */
import type http from "node:http";
import net from "node:net";

export interface HttpDrain {
  /** True from the moment `drain()` is called: readiness answers 503 from then on. */
  readonly draining: boolean;
  /** Requests received and not yet answered. */
  readonly inFlight: number;
  /**
   * While draining, answers the request with SHUTTING_DOWN and returns true; the caller then
   * leaves it alone. Servers call it for work (GraphQL, uploads), not for health checks.
   */
  refuseWhileDraining(response: http.ServerResponse): boolean;
  /**
   * Drains the server; resolves once every connection is closed. Calling it again returns the
   * same drain.
   */
  drain(timeoutMs: number): Promise<DrainOutcome>;
}

export interface DrainOutcome {
  /** Requests in flight when the drain began. */
  inFlightAtStart: number;
  /** Requests answered during the drain: by their handler, or refused with SHUTTING_DOWN. */
  finished: number;
  /** Of those, the ones answered SHUTTING_DOWN (arrived during the drain, or unstarted at the deadline). */
  refused: number;
  /** Responses already streaming at the deadline, whose connections were destroyed. */
  cut: number;
}

/** The GraphQL error a client gets when this process is going away: retry, and another instance answers. */
export const SHUTTING_DOWN_BODY = JSON.stringify({
  errors: [{ message: "The server is shutting down and did not answer this request: send it again (another instance will answer it).", extensions: { code: "SHUTTING_DOWN" } }],
});
/** Seconds a client should wait before retrying: enough for a load balancer to see readiness fail. */
export const SHUTTING_DOWN_RETRY_AFTER_SECONDS = 1;

/** How long the listener may stay open after the signal while connections keep arriving. */
const MAX_BACKLOG_WAIT_MS = 1_000;
/** No connection accepted for this long: the burst is over and the listener can close. */
const BACKLOG_QUIET_MS = 20;
/** How long flushing the deadline's SHUTTING_DOWN answers may take before their connections are destroyed. */
const REFUSAL_FLUSH_MS = 1_000;

interface ConnectionState {
  /** Requests received and not yet answered (0: idle keep-alive, or nothing parsed yet). */
  unanswered: number;
  /** Requests ever received on it: 0 means the client connected and its first request is still on its way. */
  received: number;
}

/** Starts tracking the server's connections and requests; call before it receives any. */
export function trackForDrain(server: http.Server): HttpDrain {
  const connections = new Map<net.Socket, ConnectionState>();
  const unanswered = new Set<http.ServerResponse>();
  const refused = new WeakSet<http.ServerResponse>();
  let draining = false;
  let accepted = 0;
  let finishedDuringDrain = 0;
  let refusedDuringDrain = 0;
  let drained: Promise<DrainOutcome> | null = null;
  let onChange: (() => void) | null = null;

  server.on("connection", (socket: net.Socket) => {
    accepted += 1;
    connections.set(socket, { unanswered: 0, received: 0 });
    socket.once("close", () => {
      connections.delete(socket);
      onChange?.();
    });
  });
  // Prepended so that `shouldKeepAlive` is set before any handler writes its headers.
  server.prependListener("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    const connection = connections.get(request.socket);
    if (connection) {
      connection.unanswered += 1;
      connection.received += 1;
    }
    unanswered.add(response);
    if (draining) response.shouldKeepAlive = false;
    // 'close' fires whether the response was sent or its connection died first.
    response.once("close", () => {
      unanswered.delete(response);
      if (connection) connection.unanswered = Math.max(0, connection.unanswered - 1);
      if (draining) finishedDuringDrain += 1;
      onChange?.();
    });
  });

  function refuse(response: http.ServerResponse) {
    if (refused.has(response)) return;
    refused.add(response);
    refusedDuringDrain += 1;
    response.shouldKeepAlive = false;
    // An unread body left in the socket would turn our close into a reset: read and drop it.
    response.req?.resume();
    response.writeHead(503, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "retry-after": String(SHUTTING_DOWN_RETRY_AFTER_SECONDS),
      connection: "close",
    });
    response.end(SHUTTING_DOWN_BODY);
    // A handler still running (the deadline case) answers later into a response already sent:
    // its writes go nowhere instead of throwing ERR_HTTP_HEADERS_SENT into its error path.
    Object.assign(response, {
      writeHead: () => response,
      setHeader: () => response,
      appendHeader: () => response,
      removeHeader: () => undefined,
      flushHeaders: () => undefined,
      write: () => true,
      end: () => response,
    });
  }

  /** Resolves when `done()` holds (re-checked on every request and connection change) or at `deadline`; true if it held. */
  function until(done: () => boolean, deadline: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(false), Math.max(0, deadline - Date.now()));
      timer.unref();
      function finish(held: boolean) {
        clearTimeout(timer);
        onChange = null;
        resolve(held);
      }
      onChange = () => {
        if (done()) finish(true);
      };
    });
  }

  return {
    get draining() {
      return draining;
    },
    get inFlight() {
      return unanswered.size;
    },
    refuseWhileDraining(response) {
      if (!draining) return false;
      refuse(response);
      return true;
    },
    drain(timeoutMs) {
      drained ??= (async () => {
        const deadline = Date.now() + timeoutMs;
        const inFlightAtStart = unanswered.size;
        draining = true;
        // Responses not yet started close their connection when they end.
        for (const response of unanswered) if (!response.headersSent) response.shouldKeepAlive = false;
        const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
        // Stop listening only once no connection has been accepted for a quiet period: closing the
        // listener resets those still waiting in the kernel's backlog, and under load (a busy
        // process accepts late, a burst's client connects slowly) that was a quarter of a burst.
        // Their requests get SHUTTING_DOWN. Bounded, so that clients that keep connecting cannot
        // hold the listener open.
        const stopAcceptingBy = Math.min(deadline, Date.now() + MAX_BACKLOG_WAIT_MS);
        for (let before = -1; before !== accepted && Date.now() < stopAcceptingBy; ) {
          before = accepted;
          await new Promise((resolve) => setTimeout(resolve, BACKLOG_QUIET_MS).unref());
          // Then a whole turn of the loop, whose poll phase accepts what the backlog holds.
          await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
        }
        // net.Server's close stops listening and leaves open connections alone; http.Server's
        // would also cut idle keep-alive connections now (see the top of this file).
        if (server.listening) net.Server.prototype.close.call(server);

        // Done when every request is answered and no client that connected is still sending its
        // first request (ending such a connection would leave that request unanswered).
        const settled = () => unanswered.size === 0 && ![...connections.values()].some((connection) => connection.received === 0);
        let cut = 0;
        if (!(await until(settled, deadline))) {
          // The deadline: what has not started answering is told to retry; what is streaming is cut.
          const streaming: http.ServerResponse[] = [];
          for (const response of unanswered) {
            if (response.headersSent && !refused.has(response)) streaming.push(response);
            else refuse(response);
          }
          cut = streaming.length;
          for (const response of streaming) response.destroy();
          await until(() => unanswered.size === 0, Date.now() + REFUSAL_FLUSH_MS);
        }
        const outcome = { inFlightAtStart, finished: finishedDuringDrain, refused: refusedDuringDrain, cut };
        // Nothing left to answer: idle connections go now, and so does anything still stuck.
        for (const [socket, connection] of connections) {
          if (connection.unanswered === 0) socket.end();
          else socket.destroy();
        }
        setImmediate(() => {
          for (const socket of connections.keys()) socket.destroy();
        }).unref();
        if (connections.size > 0 || server.listening) await closed;
        return outcome;
      })();
      return drained;
    },
  };
}

/** One log line for a finished drain; a warning when the deadline cut a streaming response. */
export function logDrainOutcome(outcome: DrainOutcome, logger: { info(message: string): void; warn(message: string): void }): void {
  const line = `drained: ${outcome.inFlightAtStart} requests in flight at the signal, ${outcome.finished} answered during the drain (${outcome.refused} of them SHUTTING_DOWN), ${outcome.cut} cut`;
  if (outcome.cut > 0) logger.warn(`${line}: the deadline passed while they were streaming`);
  else logger.info(line);
}
