/** A port that is taken names the setting that moves it (lib/listen.ts). */
import http from "node:http";
import net from "node:net";
import { expect, it } from "@jest/globals";
import { listen, PortInUseError } from "../../lib/listen.js";

it("refuses a port another server holds with a message naming the variable to set, and listens on a free one", async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  const taken = (holder.address() as net.AddressInfo).port;
  const server = http.createServer();
  try {
    const refusal = await listen(server, taken, "127.0.0.1", "GATEWAY_PORT").then(() => null, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(PortInUseError);
    expect((refusal as Error).message).toBe(
      `Port ${taken} on 127.0.0.1 is already in use (by another program, or a second \`npm start\`). Stop that program, or set GATEWAY_PORT to a free port (0 lets the system pick one), e.g. GATEWAY_PORT=${taken + 1000} npm start.`,
    );
    await listen(server, 0, "127.0.0.1", "GATEWAY_PORT");
    expect((server.address() as net.AddressInfo).port).toBeGreaterThan(0);
  } finally {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => holder.close(resolve));
  }
});
