/**
 * A TCP proxy of ours in front of a real server (a subgraph, PostgreSQL), on a loopback port that
 * stays the same whatever its state, so what is configured in front of it (a supergraph, a pool's
 * connection string) keeps pointing at it. A test switches it between the faults a peer shows:
 *
 * - `open`: bytes pass both ways, as if the proxy were not there;
 * - `down`: nothing listens on its port, so a connection is refused (a stopped process);
 * - `frozen`: connections are accepted and what the client sends is read and dropped, but nothing
 *   ever comes back (a process stopped with SIGSTOP whose kernel still completes handshakes, or a
 *   load balancer in front of a hung backend);
 * - `cut`: every open connection is reset, and every new one as soon as it arrives (a database
 *   that went away: ECONNRESET, "Connection terminated");
 * - `stalled`: nothing passes either way and nothing is reset: open connections are paused where
 *   they are, new ones are held unanswered (a server that stopped answering, or a network that
 *   drops packets), and are reset when the proxy leaves this state.
 *
 * Switching to `down`, `frozen` or `cut` ends the connections it holds, so a client's pooled
 * keep-alive connection cannot carry the previous state over; `stalled` keeps them, paused, and
 * `open` resumes them.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

export type ProxyState = "open" | "down" | "frozen" | "cut" | "stalled";

export class TcpProxy {
  private state: ProxyState = "open";
  /** Forwarded connections, both sides. */
  private readonly sockets = new Set<net.Socket>();
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
    for (const socket of this.held) socket.resetAndDestroy();
    this.held.clear();
    if (state === "stalled") for (const socket of this.sockets) socket.pause();
    else if (state === "open") for (const socket of this.sockets) socket.resume();
    else this.endAll(state === "cut");
    if (state === "down") await new Promise<void>((resolve) => this.server.close(() => resolve()));
    else if (was === "down") await this.listen();
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
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      // Either side failing ends both; the errors themselves are what the client under test sees.
      socket.on("error", () => (socket === client ? upstream : client).destroy());
    }
    client.pipe(upstream).pipe(client);
  }

  private endAll(reset: boolean) {
    for (const socket of this.sockets) {
      if (reset) socket.resetAndDestroy();
      else socket.destroy();
    }
    this.sockets.clear();
  }
}
