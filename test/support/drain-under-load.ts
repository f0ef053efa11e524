/**
 * What every drain test of a real process does (graceful-drain-processes*.test.ts): put 600
 * requests in flight in three states, send SIGTERM, check what the process does while it drains,
 * let the held database go, and check that every request got its real answer and nothing was
 * reset. The states, 200 requests each:
 * - streaming: a large response has started and its client is not reading (headers received);
 * - waiting: a read whose SQL waits at the held database (directly, or through a slow subgraph);
 * - writing: a mutation whose SQL waits at the held database (mid-write).
 * Requests that arrive on open keep-alive connections after the signal must get a retryable
 * SHUTTING_DOWN (503, Retry-After, Connection: close); new connections must be refused; the
 * process must exit 0 and report all 600 answered and none cut.
 */
import http from "node:http";
import net from "node:net";
import { expect } from "@jest/globals";
import { drainReport, type ServerProcess, type SubgraphProcess } from "./server-processes.js";
import { tokenFor } from "./tenants.js";

export const PER_STATE = 200;
const LATE_REQUESTS = 5;

export interface Operation {
  query: string;
  variables(index: number): Record<string, unknown>;
  /** Throws (through expect) unless `data` is this operation's real answer. */
  check(data: Record<string, any>, index: number): void;
}

export interface DrainWorkload {
  organizationId: string;
  /** A large answer, read by a token of `organizationId` (its user `reader`). */
  streaming: Operation;
  /** A read whose SQL waits at the held database. */
  waiting: Operation;
  /** A mutation whose SQL waits at the held database. */
  writing: Operation;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * Posts one GraphQL request over `agent`. With `reader`, the client stops reading once the
 * response has started (`onStarted`) and reads the rest only when `reader.resume` resolves.
 * Rejects with the socket's error code on a reset, which fails the test.
 */
export function post(url: string, agent: http.Agent, token: string | null, query: string, variables: Record<string, unknown>, reader?: { onStarted(): void; resume: Promise<void> }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
      if (reader) {
        response.pause();
        reader.onStarted();
        void reader.resume.then(() => response.resume());
      }
    });
    request.on("error", (error: NodeJS.ErrnoException) => reject(new Error(`${error.code ?? error.message}`)));
    request.end(JSON.stringify({ query, variables }));
  });
}

function get(url: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      })
      .on("error", reject);
  });
}

/** Polls until `condition` holds; a bounded wait, generous for a loaded machine. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000) {
  for (const until = Date.now() + timeoutMs; !(await condition()); ) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** "connected", or the error code a new TCP connection gets. */
export function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

function json(answer: Answer) {
  return JSON.parse(answer.body) as { data?: Record<string, any>; errors?: { message: string; extensions?: { code?: string } }[] };
}

function expectAnswered(answer: Answer, operation: Operation, index: number) {
  expect(answer.status).toBe(200);
  expect(json(answer).errors).toBeUndefined();
  operation.check(json(answer).data!, index);
}

/**
 * Drains `target` (the gateway, or `database` itself) with the workload's 600 requests in flight;
 * `database` is the subgraph process whose database is held.
 */
export async function drainWithThreeStates(target: ServerProcess, database: SubgraphProcess, workload: DrainWorkload): Promise<void> {
  try {
    await drainUnderLoad(target, database, workload);
  } catch (error) {
    // The processes' own words are what explains a failure here.
    const tail = (server: ServerProcess) => server.output().split("\n").slice(-30).join("\n");
    (error as Error).message += `\n--- ${target.url} ---\n${tail(target)}${target === database ? "" : `\n--- ${database.url} ---\n${tail(database)}`}`;
    throw error;
  }
}

async function drainUnderLoad(target: ServerProcess, database: SubgraphProcess, workload: DrainWorkload): Promise<void> {
  const url = target.url;
  const healthUrl = url.replace(/\/graphql$/, target === database ? "/health" : "/readyz");
  // Enough sockets for every request at once; the probe and the late agents keep their connections open.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 3 * PER_STATE });
  const probe = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const late = new http.Agent({ keepAlive: true, maxSockets: LATE_REQUESTS });
  try {
    // The probe's connection is open before the signal (readiness itself may be 503: subgraphs not started).
    expect(JSON.parse((await get(healthUrl, probe)).body).status).not.toBe("draining");
    const { organizationId } = workload;
    const readerToken = await tokenFor(organizationId, "reader");

    let started = 0;
    let resumeReading!: () => void;
    const readers = new Promise<void>((resolve) => (resumeReading = resolve));
    const streaming = Array.from({ length: PER_STATE }, (_, index) => post(url, agent, readerToken, workload.streaming.query, workload.streaming.variables(index), { onStarted: () => (started += 1), resume: readers }));
    await eventually(() => started === PER_STATE, `${PER_STATE} large responses started`);

    // One user per request, so the gateway merges none of them into another.
    database.holdDatabase();
    const tokens = await Promise.all(Array.from({ length: PER_STATE }, (_, index) => tokenFor(organizationId, `user-${index}`)));
    const waiting = tokens.map((token, index) => post(url, agent, token, workload.waiting.query, workload.waiting.variables(index)));
    const writing = tokens.map((token, index) => post(url, agent, token, workload.writing.query, workload.writing.variables(index)));
    // All 400 in the process whose database is held, and that database holding statements. Not
    // "400 statements": requests may share a read in flight (a web search's lookup of the
    // organization's stored keys, whose 5 s entry expires when a loaded machine takes longer than
    // that between the streamed answers and these requests: then 200 writes wait on one statement).
    await eventually(() => database.received() >= 2 * PER_STATE && database.held() >= PER_STATE, `${2 * PER_STATE} requests waiting at the database`);

    // Keep-alive connections idle at the signal (opened now: servers close idle ones after 5 s),
    // by a request without a token, which touches no database.
    const lateToken = await tokenFor(organizationId, "late");
    await Promise.all(Array.from({ length: LATE_REQUESTS }, () => post(url, late, null, "{ __typename }", {})));
    // The load balancer's probe connection too, by the same kind of request (health checks may read the held database).
    await post(url, probe, null, "{ __typename }", {});
    target.child.kill("SIGTERM");
    // A health check that arrived before the signal was handled would wait at the held database.
    await eventually(() => /SIGTERM received: draining/.test(target.output()), "the signal handled");
    // A load balancer's persistent connection sees readiness fail at once.
    await eventually(async () => {
      const health = await get(healthUrl, probe);
      return health.status === 503 && JSON.parse(health.body).status === "draining";
    }, "health saying draining");
    // Requests on connections that were open before the signal: told to retry, never reset.
    const lateAnswers = await Promise.all(Array.from({ length: LATE_REQUESTS }, (_, index) => post(url, late, lateToken, workload.waiting.query, workload.waiting.variables(index))));
    for (const answer of lateAnswers) {
      expect(answer.status).toBe(503);
      expect(answer.headers["retry-after"]).toBe("1");
      expect(answer.headers.connection).toBe("close");
      expect(json(answer).errors?.map((error) => error.extensions?.code)).toEqual(["SHUTTING_DOWN"]);
    }
    // New connections are refused once the listener has closed (when no connection arrived for a moment).
    await eventually(async () => (await connectOutcome(target.port)) === "ECONNREFUSED", "new connections refused", 10_000);
    expect(target.child.exitCode).toBeNull();

    database.releaseDatabase();
    resumeReading();
    const [waited, written, streamed] = await Promise.all([Promise.all(waiting), Promise.all(writing), Promise.all(streaming)]);
    waited.forEach((answer, index) => expectAnswered(answer, workload.waiting, index));
    written.forEach((answer, index) => expectAnswered(answer, workload.writing, index));
    streamed.forEach((answer, index) => expectAnswered(answer, workload.streaming, index));
    expect(await target.exited).toEqual({ code: 0, signal: null });
    // The process's own account. The 400 held requests were in flight at the signal; a streamed
    // response counts too while its bytes are still in the process (the kernel takes about 2 MB
    // per loopback connection before a client that does not read holds the writer back). Answered
    // during the drain: those, the late requests, and the health checks that saw it draining.
    const report = drainReport(target.output());
    expect(report).not.toBeNull();
    expect(report!.inFlightAtStart).toBeGreaterThanOrEqual(2 * PER_STATE);
    expect(report!.finished).toBeGreaterThanOrEqual(report!.inFlightAtStart + LATE_REQUESTS);
    expect(report!.refused).toBe(LATE_REQUESTS);
    expect(report!.cut).toBe(0);
    expect(target.output()).not.toMatch(/aborted because the server is shutting down/);
  } finally {
    database.releaseDatabase();
    agent.destroy();
    probe.destroy();
    late.destroy();
  }
}
