/**
 * A TCP proxy of ours in front of a real server (a subgraph, PostgreSQL), on a loopback port that
 * stays the same whatever its state, so what is configured in front of it (a supergraph, a pool's
 * connection string) keeps pointing at it. A test switches it between the faults a peer shows:
 *
 * - `open`: bytes pass both ways, as if the proxy were not there;
 * - `down`: nothing listens on its port, so a connection is refused (a stopped process);
 * - `frozen`: connections are accepted and what the client sends is read and dropped, but nothing
 *   ever comes back (a process stopped with SIGSTOP whose kernel still completes handshakes, or a
 *   load balancer in front of a hung backend); open connections freeze the same way, as a stopped
 *   process's do, so a client's pooled keep-alive connection times out like a new one;
 * - `cut`: every open connection is reset, and every new one as soon as it arrives (a database
 *   that went away: ECONNRESET, "Connection terminated");
 * - `stalled`: nothing passes either way and nothing is reset: open connections are paused where
 *   they are, new ones are held unanswered (a server that stopped answering, or a network that
 *   drops packets), and are reset when the proxy leaves this state.
 *
 * Switching to `down` or `cut` ends the connections it holds, so a client's pooled keep-alive
 * connection cannot carry the previous state over; `frozen` keeps them, answering nothing;
 * `stalled` keeps them, paused, and `open` resumes them. Connections frozen or held in one state
 * are reset when the proxy leaves it: what was sent on them was dropped.
 *
 * Why `frozen` does not end them: a client can take a pooled connection whose end it has not
 * read yet, and its request then fails at once ("other side closed") instead of waiting for an
 * answer that never comes, which is not what a frozen peer looks like (seen once in CI, with the
 * gateway reporting a frozen subgraph as failing rather than as not answering in time).
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

export type ProxyState = "open" | "down" | "frozen" | "cut" | "stalled";

export class TcpProxy {
  private state: ProxyState = "open";
  /** Forwarded connections: each one's client side, and its upstream. */
  private readonly forwarded = new Map<net.Socket, net.Socket>();
  /** Connections that arrived while frozen or stalled: never forwarded. */
  private readonly held = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.accept(client));

  private constructor(
    private readonly target: { host: string; port: number },
    private port = 0,
  ) {}

  /** A proxy on a free port of 127.0.0.1 in front of `target` (a URL, or a host and port). */
  static async start(target: string | { host: string; port: number }): Promise<TcpProxy> {
    const { host, port } = typeof target === "string" ? { host: new URL(target).hostname, port: Number(new URL(target).port) } : target;
    const proxy = new TcpProxy({ host: host === "localhost" ? "127.0.0.1" : host, port });
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(this.port);
    return proxied.toString();
  }

  async set(state: ProxyState): Promise<void> {
    if (state === this.state) return;
    const was = this.state;
    this.state = state;
    // Whether this ends connections a client may hold in its pool: a client in this process (a
    // gateway under test) reads their end in its next turn of the event loop, and a request it
    // sent before that would take the dead connection and fail at once ("other side closed"),
    // whatever the new state. So set() returns once the client has had that turn (a loopback
    // peer's end is queued on its socket when destroy() returns; 20 ms is many turns).
    const ended = this.held.size > 0 || state === "down" || state === "cut";
    for (const socket of this.held) socket.resetAndDestroy();
    this.held.clear();
    if (state === "stalled") for (const socket of this.forwardedSockets()) socket.pause();
    else if (state === "open") for (const socket of this.forwardedSockets()) socket.resume();
    else if (state === "frozen") this.freezeAll();
    else this.endAll(state === "cut");
    if (state === "down") await new Promise<void>((resolve) => this.server.close(() => resolve()));
    else if (was === "down") await this.listen();
    if (ended) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async close(): Promise<void> {
    await this.set("down");
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  private accept(client: net.Socket) {
    client.on("error", () => client.destroy());
    if (this.state === "cut") return void client.resetAndDestroy();
    if (this.state === "frozen" || this.state === "stalled") {
      this.held.add(client);
      client.on("close", () => this.held.delete(client));
      // Frozen reads and drops, so the client's request is fully sent and its answer never comes;
      // stalled reads nothing at all.
      if (this.state === "frozen") client.on("data", () => {});
      else client.pause();
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      // Either side failing ends both; the errors themselves are what the client under test sees.
      socket.on("error", () => (socket === client ? upstream : client).destroy());
    }
    this.forwarded.set(client, upstream);
    client.on("close", () => this.forwarded.delete(client));
    client.pipe(upstream).pipe(client);
  }

  /** Both sides of every forwarded connection. */
  private *forwardedSockets(): Iterable<net.Socket> {
    for (const [client, upstream] of this.forwarded) yield* [client, upstream];
  }

  /** Open connections as a stopped peer's: kept, what the client sends read and dropped, nothing back. */
  private freezeAll() {
    for (const [client, upstream] of this.forwarded) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      upstream.pause();
      client.resume();
      client.on("data", () => {});
      for (const socket of [client, upstream]) {
        this.held.add(socket);
        socket.on("close", () => this.held.delete(socket));
      }
    }
    this.forwarded.clear();
  }

  private endAll(reset: boolean) {
    for (const socket of this.forwardedSockets()) {
      if (reset) socket.resetAndDestroy();
      else socket.destroy();
    }
    this.forwarded.clear();
  }
}
