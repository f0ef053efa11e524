/**
 * Starts a server listening, and turns a port that is taken into a message that says what to do:
 * Node's own ("listen EADDRINUSE: address already in use 127.0.0.1:4000", with a stack) names the
 * port but not the setting that moves it, and a newcomer's first `npm start` beside another
 * program on 4000 met exactly that.
 */
import type { Server } from "node:net";

export class PortInUseError extends Error {
  constructor(host: string, port: number, variable: string) {
    super(
      `Port ${port} on ${host} is already in use (by another program, or a second \`npm start\`). ` +
        `Stop that program, or set ${variable} to a free port (0 lets the system pick one), e.g. ${variable}=${port === 0 ? 5000 : port + 1000} npm start.`,
    );
    this.name = "PortInUseError";
  }
}

/** Resolves once `server` listens on `port` of `host`; `variable` is the setting that chooses the port. */
export async function listen(server: Server, port: number, host: string, variable: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(error.code === "EADDRINUSE" ? new PortInUseError(host, port, variable) : error);
    // Left attached once listening, as before this helper: a later error is not ours to report.
    server.once("error", failed);
    server.listen(port, host, () => resolve());
  });
}
