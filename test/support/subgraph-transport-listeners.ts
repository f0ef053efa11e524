/**
 * Sends REQUESTS sequential queries through the gateway's subgraph HTTP transport
 * (gateway/subgraph-transport.ts) to a local GraphQL endpoint, each linked to a signal the way
 * the gateway's upstream timeout links it, and prints as one JSON line: how many answered, the
 * most abort listeners any one signal held right after an answer came in, the connections the
 * endpoint accepted, and Node's warnings. Every signal that gets an abort listener is kept
 * reachable here, so no listener goes by garbage collection: what is left is what the
 * transport leaves. A child process because Jest's sandbox gives tests copies of the globals
 * (EventTarget, process) that Node's own HTTP client and warnings do not use.
 * Usage: tsx test/support/subgraph-transport-listeners.ts
 */
import http from "node:http";
import { getEventListeners } from "node:events";
import type { AddressInfo } from "node:net";
import { abortSignalAny } from "@graphql-hive/signal";
import { parse } from "graphql";
import { subgraphHttpTransport } from "../../gateway/subgraph-transport.js";

const warnings: { name: string; message: string }[] = [];
process.on("warning", (warning) => void warnings.push({ name: warning.name, message: warning.message }));

const listenedTo = new Set<EventTarget>();
const addEventListener = EventTarget.prototype.addEventListener;
EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
  if (type === "abort") listenedTo.add(this);
  return (addEventListener as (...args: unknown[]) => void).call(this, type, ...rest);
};

let connections = 0;
const server = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ data: { ping: "pong" } }));
  });
});
server.on("connection", () => void connections++);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;

const executor = subgraphHttpTransport.getSubgraphExecutor({ transportEntry: { kind: "http", subgraph: "ping", location: url }, subgraphName: "ping" } as never);
const document = parse("query Ping { ping }");
let answered = 0;
let mostListenersAfterAnswer = 0;
for (let i = 0; i < Number(process.env.REQUESTS ?? 200); i++) {
  // As the gateway's upstream timeout calls it: the client request's signal and a timeout, linked.
  const client = new AbortController();
  const result = (await executor({ document, operationType: "query", signal: abortSignalAny([AbortSignal.timeout(60_000), client.signal]) } as never)) as { data?: { ping?: string } };
  if (result.data?.ping === "pong") answered++;
  for (const target of listenedTo) mostListenersAfterAnswer = Math.max(mostListenersAfterAnswer, getEventListeners(target, "abort").length);
}
await new Promise<void>((resolve) => server.close(() => resolve()));
process.stdout.write(`${JSON.stringify({ answered, mostListenersAfterAnswer, connections, warnings: warnings.filter((w) => w.name !== "ExperimentalWarning") })}\n`);
process.exit(0);
