/**
 * A TCP proxy of ours in front of a server, which a test switches between three states:
 *
 * - `open`: bytes pass both ways, as if the proxy were not there;
 * - `down`: nothing listens on its port, so a connection is refused (a stopped process);
 * - `frozen`: connections are accepted and what the client sends is read and dropped, but nothing
 *   ever comes back (a process stopped with SIGSTOP whose kernel still completes handshakes, or a
 *   load balancer in front of a hung backend).
 *
 * Every switch cuts the connections it holds, so a client's pooled keep-alive connection cannot
 * carry the previous state over; the port stays the same across switches, so the gateway in front
 * keeps its supergraph.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

export type ProxyState = "open" | "down" | "frozen";

export class SwitchableProxy {
  private state: ProxyState = "open";
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.accept(client));

  private constructor(
    private readonly target: { host: string; port: number },
    private port = 0,
  ) {}

  /** A proxy on a free port of 127.0.0.1 in front of `targetUrl`'s host and port. */
  static async start(targetUrl: string): Promise<SwitchableProxy> {
    const url = new URL(targetUrl);
    const proxy = new SwitchableProxy({ host: url.hostname === "localhost" ? "127.0.0.1" : url.hostname, port: Number(url.port) });
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  addressFor(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(this.port);
    return proxied.toString();
  }

  async set(state: ProxyState): Promise<void> {
    if (state === this.state) return;
    const wasDown = this.state === "down";
    this.state = state;
    this.cutAll();
    if (state === "down") await new Promise<void>((resolve) => this.server.close(() => resolve()));
    else if (wasDown) await this.listen();
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
    this.track(client);
    if (this.state === "frozen") {
      // Read and drop: the client's request is fully sent, and its answer never comes.
      client.on("data", () => {});
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    this.track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
  }

  private track(socket: net.Socket) {
    this.sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => this.sockets.delete(socket));
  }

  private cutAll() {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}
