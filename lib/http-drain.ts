/**
 * Graceful drain of a `node:http` server, shared by the gateway and every subgraph: stop
 * listening (new connections are refused), let the requests already received finish, close each
 * keep-alive connection after its next response (`connection: close`), and cut whatever is still
 * running when the deadline passes.
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
   * Drains the server; resolves once every connection is closed. Requests still running after
   * `timeoutMs` have their connections destroyed (counted in `cut`). Calling it again returns the
   * same drain.
   */
  drain(timeoutMs: number): Promise<DrainOutcome>;
}

export interface DrainOutcome {
  /** Requests that were running when the drain began or arrived on open connections during it. */
  finished: number;
  /** Requests whose connections the deadline cut. */
  cut: number;
}

/** Starts tracking the server's connections and requests; call before it receives any. */
export function trackForDrain(server: http.Server): HttpDrain {
  /** Unanswered requests per open connection (0: idle keep-alive, or not parsed yet). */
  const connections = new Map<net.Socket, number>();
  const unanswered = new Set<http.ServerResponse>();
  let draining = false;
  let finishedDuringDrain = 0;
  let drained: Promise<DrainOutcome> | null = null;
  let onIdle: (() => void) | null = null;

  server.on("connection", (socket: net.Socket) => {
    connections.set(socket, 0);
    socket.once("close", () => connections.delete(socket));
  });
  // Prepended so that `shouldKeepAlive` is set before any handler writes its headers.
  server.prependListener("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    connections.set(socket, (connections.get(socket) ?? 0) + 1);
    unanswered.add(response);
    if (draining) response.shouldKeepAlive = false;
    // 'close' fires whether the response was sent or its connection died first.
    response.once("close", () => {
      unanswered.delete(response);
      if (connections.has(socket)) connections.set(socket, Math.max(0, (connections.get(socket) ?? 1) - 1));
      if (draining) {
        finishedDuringDrain += 1;
        if (unanswered.size === 0) onIdle?.();
      }
    });
  });

  return {
    get draining() {
      return draining;
    },
    get inFlight() {
      return unanswered.size;
    },
    drain(timeoutMs) {
      drained ??= (async () => {
        draining = true;
        // Responses not yet started close their connection when they end.
        for (const response of unanswered) if (!response.headersSent) response.shouldKeepAlive = false;
        const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
        // net.Server's close stops listening and leaves open connections alone; http.Server's
        // would also cut idle keep-alive connections now (see the top of this file).
        if (server.listening) net.Server.prototype.close.call(server);
        let cut = 0;
        if (unanswered.size > 0) {
          let timer: NodeJS.Timeout | undefined;
          const allAnswered = await Promise.race([
            new Promise<true>((resolve) => (onIdle = () => resolve(true))),
            new Promise<false>((resolve) => {
              timer = setTimeout(() => resolve(false), timeoutMs);
              timer.unref();
            }),
          ]);
          clearTimeout(timer);
          if (!allAnswered) cut = unanswered.size;
        }
        const finished = finishedDuringDrain;
        // Nothing left to answer: idle connections go now, and so do stuck ones past the deadline.
        for (const [socket, requests] of connections) {
          if (requests === 0) socket.end();
          else socket.destroy();
        }
        setImmediate(() => {
          for (const socket of connections.keys()) socket.destroy();
        }).unref();
        if (connections.size > 0 || server.listening) await closed;
        return { finished, cut };
      })();
      return drained;
    },
  };
}
