/**
 * A TCP proxy of ours in front of a real server (PostgreSQL), on an ephemeral loopback port, that
 * a test can cut and restore: what a database that goes away looks like to the code that uses
 * it, without stopping the shared server. Cut, every open connection is reset and every new one
 * is reset as soon as it arrives (the client sees ECONNRESET or "Connection terminated"), until
 * restore(). Stalled, nothing passes either way and nothing is reset (a server that stopped
 * answering, or a network that drops packets): open connections are paused, new ones are held.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

export class TcpProxy {
  private readonly sockets = new Set<net.Socket>();
  /** Connections that arrived while stalled: never forwarded, reset on restore(). */
  private readonly held = new Set<net.Socket>();
  private mode: "forward" | "cut" | "stall" = "forward";

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = net.createServer((client) => {
      if (!proxy || proxy.mode === "cut") return void client.resetAndDestroy();
      if (proxy.mode === "stall") {
        client.pause();
        client.on("error", () => undefined);
        return void proxy.held.add(client);
      }
      const upstream = net.connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        proxy.sockets.add(socket);
        socket.on("close", () => proxy?.sockets.delete(socket));
        // Either side failing ends both; the errors themselves are what the client under test sees.
        socket.on("error", () => (socket === client ? upstream : client).destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    proxy = new TcpProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  /** The same URL, through this proxy. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = "127.0.0.1";
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Resets every open connection and, until restore(), every new one. */
  cutConnections(): void {
    this.mode = "cut";
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
  }

  /** Stops every byte, resetting nothing, until restore(). */
  stallConnections(): void {
    this.mode = "stall";
    for (const socket of this.sockets) socket.pause();
  }

  restore(): void {
    this.mode = "forward";
    for (const socket of this.sockets) socket.resume();
    for (const socket of this.held) socket.resetAndDestroy();
    this.held.clear();
  }

  async close(): Promise<void> {
    this.cutConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
