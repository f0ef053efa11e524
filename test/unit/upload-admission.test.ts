/**
 * The bounds on uploads in flight (gateway/upload-admission.ts), counted directly: the e2e suite
 * (test/e2e/upload-admission.test.ts) holds real uploads open against a running gateway for the
 * per-user and per-organization bounds, but the process-wide bound needs more callers in flight
 * than that is worth, so here every place is taken by admission alone, as the gateway takes it
 * when a request's headers arrive, and given back as it is when the answer is out. Then the two
 * upload handlers (`POST /documents`, GraphQL multipart) on a real HTTP server, with a runtime
 * that holds their operations: a client that sends its file and hangs up at once keeps its place
 * until the gateway is done with the file, since the gateway holds its bytes until then.
 */
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "@jest/globals";
import { buildSchema } from "graphql";
import { documentUpload } from "../../gateway/document-upload.js";
import { multipartRequest } from "../../gateway/multipart-request.js";
import { MAX_UPLOADS_IN_FLIGHT, MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION, MAX_UPLOADS_IN_FLIGHT_PER_USER, uploadAdmission, type UploadAdmission } from "../../gateway/upload-admission.js";
import { until } from "../support/server-processes.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

/** The headers and socket of an upload request: all that admission reads. */
async function uploadFrom(organizationId: string, userId: string): Promise<http.IncomingMessage> {
  return { headers: { authorization: `Bearer ${await tokenFor(organizationId, userId)}` }, socket: { remoteAddress: "127.0.0.1" } } as unknown as http.IncomingMessage;
}

describe("uploads in flight", () => {
  it("the process admits MAX_UPLOADS_IN_FLIGHT across organizations, refuses the next with 503 OVERLOADED, and admits again once one is answered", async () => {
    const admit = uploadAdmission(TEST_AUTH, null);
    // Every organization up to its own bound, each user up to theirs: only the process's bound is left to refuse.
    const usersPerOrganization = MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION / MAX_UPLOADS_IN_FLIGHT_PER_USER;
    const held: UploadAdmission[] = [];
    for (let organization = 0; held.length < MAX_UPLOADS_IN_FLIGHT; organization += 1) {
      for (let user = 0; user < usersPerOrganization && held.length < MAX_UPLOADS_IN_FLIGHT; user += 1) {
        for (let upload = 0; upload < MAX_UPLOADS_IN_FLIGHT_PER_USER && held.length < MAX_UPLOADS_IN_FLIGHT; upload += 1) {
          const admission = await admit(await uploadFrom(`org-${organization}`, `user-${user}`));
          expect(admission.refusal).toBeUndefined();
          held.push(admission);
        }
      }
    }

    const newcomer = await uploadFrom("org-newcomer", "nia");
    const refused = await admit(newcomer);
    expect(refused.refusal).toEqual({
      status: 503,
      code: "OVERLOADED",
      message: `The server is busy with ${MAX_UPLOADS_IN_FLIGHT} uploads: retry in a few seconds.`,
      headers: { "retry-after": "1" },
    });

    // Released twice, a place is still given back once.
    held[0]!.release!();
    held[0]!.release!();
    const admitted = await admit(newcomer);
    expect(admitted.refusal).toBeUndefined();
    expect((await admit(await uploadFrom("org-late", "lee"))).refusal?.status).toBe(503);

    for (const admission of [...held.slice(1), admitted]) admission.release!();
    const again = await Promise.all(Array.from({ length: MAX_UPLOADS_IN_FLIGHT_PER_USER }, async () => admit(await uploadFrom("org-0", "user-0"))));
    expect(again.map((admission) => admission.refusal)).toEqual(Array(MAX_UPLOADS_IN_FLIGHT_PER_USER).fill(undefined));
  });

  it("a user's and an organization's bounds are kept apart from other users' and organizations'", async () => {
    const admit = uploadAdmission(TEST_AUTH, null);
    for (let upload = 0; upload < MAX_UPLOADS_IN_FLIGHT_PER_USER; upload += 1) expect((await admit(await uploadFrom("org-a", "ada"))).refusal).toBeUndefined();
    expect((await admit(await uploadFrom("org-a", "ada"))).refusal).toMatchObject({ status: 429, code: "OVERLOADED" });
    // The same user id in another organization is another user.
    expect((await admit(await uploadFrom("org-b", "ada"))).refusal).toBeUndefined();
    for (let upload = MAX_UPLOADS_IN_FLIGHT_PER_USER; upload < MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION; upload += 1) {
      expect((await admit(await uploadFrom("org-a", `colleague-${upload}`))).refusal).toBeUndefined();
    }
    expect((await admit(await uploadFrom("org-a", "someone-new"))).refusal).toMatchObject({ status: 429, code: "OVERLOADED" });
    expect((await admit(await uploadFrom("org-b", "bea"))).refusal).toBeUndefined();
  });
});


const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const BOUNDARY = "upload-places";
const part = (headers: string, body: string) => `--${BOUNDARY}\r\n${headers}\r\n\r\n${body}\r\n`;
const ENDPOINTS = {
  "POST /documents": {
    path: "/documents",
    headers: {},
    body: part('Content-Disposition: form-data; name="file"; filename="notes.md"\r\nContent-Type: text/markdown', "# Notes\n\nKept until the gateway is done with them.") + `--${BOUNDARY}--\r\n`,
  },
  "GraphQL multipart": {
    path: "/graphql",
    headers: { "apollo-require-preflight": "true" },
    body:
      part('Content-Disposition: form-data; name="operations"', JSON.stringify({ query: "mutation Upload($file: Upload!) { upload(file: $file) }", variables: { file: null } })) +
      part('Content-Disposition: form-data; name="map"', JSON.stringify({ 0: ["variables.file"] })) +
      part('Content-Disposition: form-data; name="0"; filename="notes.md"\r\nContent-Type: text/markdown', "# Notes") +
      `--${BOUNDARY}--\r\n`,
  },
} as const;

/**
 * One endpoint's handler on a real HTTP server, admitting as the gateway does, with a runtime
 * whose first `hold` operations wait until `letGo()`, as a slow store would.
 */
async function uploadServer(endpoint: keyof typeof ENDPOINTS, hold: number, { endlessAnswers = 0, admittedOnceGone = 0 } = {}) {
  const counts = { started: 0, running: 0, closed: 0, handled: 0 };
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  const execute = async () => {
    counts.running += 1;
    if (counts.running <= hold) await held;
    if (counts.running <= endlessAnswers) {
      // An answer in parts whose stream never ends: its first part, then nothing.
      const parts = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode("---\r\n")) });
      return new Response(parts, { headers: { "content-type": 'multipart/mixed; boundary="-"' } });
    }
    return new Response(JSON.stringify({ data: { upload: true } }), { headers: { "content-type": "application/json" } });
  };
  const admission = uploadAdmission(TEST_AUTH, null);
  let admissions = 0;
  const admit = async (request: http.IncomingMessage) => {
    const admitted = await admission(request);
    // The first admissions take a while (a JWKS fetch, say): long enough for their clients to go meanwhile.
    admissions += 1;
    if (admissions <= admittedOnceGone) await until("the client to go", async () => request.destroyed);
    return admitted;
  };
  const common = { maxFileBytes: 1024 * 1024, graphqlUrl: "http://gateway/graphql", execute, admit, corsHeaders: () => null };
  const handle =
    endpoint === "POST /documents"
      ? documentUpload(common)
      : multipartRequest({ ...common, schema: buildSchema("scalar Upload type Query { ok: Boolean } type Mutation { upload(file: Upload!): Boolean }"), operationLimits: { maxTokens: 1_000, maxDepth: 10 } });
  const server = http.createServer((request, response) => {
    counts.started += 1;
    response.once("close", () => (counts.closed += 1));
    void handle(request, response).finally(() => (counts.handled += 1));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const token = await tokenFor("org-places", "pat");
  const { path, headers, body } = ENDPOINTS[endpoint];
  return {
    counts,
    letGo,
    /** A client that writes the head and the first `bytes` of the body on a raw socket, and keeps it open. */
    send(bytes = Buffer.byteLength(body)): net.Socket {
      const head = [`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", `Authorization: Bearer ${token}`, `Content-Type: multipart/form-data; boundary=${BOUNDARY}`, `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), "", ""].join("\r\n");
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      socket.write(head + body.slice(0, bytes));
      return socket;
    },
    async upload() {
      const answer = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}`, ...headers }, body });
      return { status: answer.status, code: ((await answer.json()) as { errors?: { extensions: { code: string } }[] }).errors?.[0]?.extensions.code };
    },
  };
}

describe.each(Object.keys(ENDPOINTS) as (keyof typeof ENDPOINTS)[])("%s: a place is held until the gateway is done with the upload", (endpoint) => {
  it("a client that sends its file and hangs up at once does not get its place back while its upload still runs", async () => {
    const gateway = await uploadServer(endpoint, MAX_UPLOADS_IN_FLIGHT_PER_USER);
    // Each client sends the whole file, and goes once its upload has reached the runtime.
    for (let client = 1; client <= MAX_UPLOADS_IN_FLIGHT_PER_USER; client += 1) {
      const socket = gateway.send();
      await until(`upload ${client} to reach the runtime`, async () => gateway.counts.running === client);
      socket.destroy();
    }
    await until("every client to be gone", async () => gateway.counts.closed === MAX_UPLOADS_IN_FLIGHT_PER_USER);

    // Every client has gone, but the gateway still holds their files: no place is free.
    expect(await gateway.upload()).toEqual({ status: 429, code: "OVERLOADED" });
    expect(gateway.counts.running).toBe(MAX_UPLOADS_IN_FLIGHT_PER_USER);

    gateway.letGo();
    await until("every handler to be done", async () => gateway.counts.handled === MAX_UPLOADS_IN_FLIGHT_PER_USER + 1);
    expect(await gateway.upload()).toEqual({ status: 200, code: undefined });
  });

  it("a client that hangs up halfway through its body gets its place back, and nothing reaches the runtime", async () => {
    const gateway = await uploadServer(endpoint, 0);
    const { body } = ENDPOINTS[endpoint];
    for (let client = 1; client <= MAX_UPLOADS_IN_FLIGHT_PER_USER; client += 1) {
      const socket = gateway.send(Math.floor(Buffer.byteLength(body) / 2));
      // The server has its request (and admits it, taking a place); then the client goes.
      await until(`request ${client} to reach the server`, async () => gateway.counts.started === client);
      socket.destroy();
    }
    await until("every handler to be done", async () => gateway.counts.handled === MAX_UPLOADS_IN_FLIGHT_PER_USER);
    expect(gateway.counts.running).toBe(0);
    expect(await gateway.upload()).toEqual({ status: 200, code: undefined });
  });

  it.each([
    ["half its body", 0.5],
    ["all of its body", 1],
  ])("a client that sends %s and goes while it is being admitted gets its place back (its request will emit nothing more)", async (_sent, share) => {
    const gateway = await uploadServer(endpoint, 0, { admittedOnceGone: MAX_UPLOADS_IN_FLIGHT_PER_USER });
    const { body } = ENDPOINTS[endpoint];
    for (let client = 1; client <= MAX_UPLOADS_IN_FLIGHT_PER_USER; client += 1) {
      const socket = gateway.send(Math.floor(Buffer.byteLength(body) * share));
      await until(`request ${client} to reach the server`, async () => gateway.counts.started === client);
      socket.destroy();
    }
    await until("every handler to be done", async () => gateway.counts.handled === MAX_UPLOADS_IN_FLIGHT_PER_USER);
    expect(gateway.counts.running).toBe(0);
    expect(await gateway.upload()).toEqual({ status: 200, code: undefined });
  });
});

describe("GraphQL multipart: an answer in parts", () => {
  it("holds no place while it streams: clients whose streamed answers never end leave every place free", async () => {
    const gateway = await uploadServer("GraphQL multipart", 0, { endlessAnswers: MAX_UPLOADS_IN_FLIGHT_PER_USER });
    for (let client = 1; client <= MAX_UPLOADS_IN_FLIGHT_PER_USER; client += 1) {
      const socket = gateway.send();
      // The answer has begun (its first part is on the way); then the client goes.
      await new Promise<void>((resolve) => socket.once("data", () => resolve()));
      socket.destroy();
    }
    await until("every client to be gone", async () => gateway.counts.closed === MAX_UPLOADS_IN_FLIGHT_PER_USER);
    expect(await gateway.upload()).toEqual({ status: 200, code: undefined });
  });
});
