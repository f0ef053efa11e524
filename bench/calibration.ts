/**
 * The machine's own speed, measured the same way as everything else: a bare `node:http`
 * server in this process answering a tiny JSON body, driven by the same load generator at one
 * connection. Its p50 is the cheapest HTTP round trip possible here, so a latency can be read
 * as "so many bare round trips" — a ratio that means the same on a fast laptop and on a
 * shared 2-core VM, where one round trip alone can take over a millisecond.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { runLoad, warmUp, type LoadResult } from "./load.js";

export async function measureBareHttp(seconds: number, token: string): Promise<LoadResult> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"data":{"ok":true}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const options = { url, token, bodies: ['{"query":"{ ok }"}'], connections: 1, durationSeconds: seconds };
    await warmUp(options, Math.min(1, seconds / 3));
    return await runLoad(options);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
