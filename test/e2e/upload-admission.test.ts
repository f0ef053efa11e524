/**
 * Uploads are admitted before their bodies are read (gateway/upload-admission.ts): `POST
 * /documents` and GraphQL multipart requests without a valid token are answered UNAUTHENTICATED
 * while the client is still sending, never after the gateway has buffered the file, and a flood of
 * them spends the anonymous budget of the sender's address (each address its own).
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION, MAX_UPLOADS_IN_FLIGHT_PER_USER } from "../../gateway/upload-admission.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const ANONYMOUS_POINTS = 10;
let test: TestStack;
let writer: string;

beforeAll(async () => {
  test = await startTestStack({
    RATE_LIMIT_ANONYMOUS_POINTS: String(ANONYMOUS_POINTS),
    RATE_LIMIT_WINDOW_SECONDS: "60",
    SEARCH_CACHE_TTL_SECONDS: "0",
  });
  writer = await tokenFor("org-admission", "ada", ["writers"]);
}, 120_000);

afterAll(async () => test?.stop());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { errors?: { message: string; extensions: Record<string, unknown> }[]; data?: Record<string, any> };
  /** Bytes of the body the client had written when the answer's headers arrived. */
  sentWhenAnswered: number;
}

/**
 * A POST that declares `declaredBytes` (or none: chunked), writes `head` and then filler only
 * until it has `sendFirst` bytes out, and waits there for the answer: an answer that arrives
 * proves the gateway did not wait for the rest. The rest is then written if the connection is
 * still open, as a client that ignores early answers would.
 */
function postWithheld(path: string, headers: Record<string, string>, head: string, options: { declaredBytes?: number; sendFirst: number; localAddress?: string }): Promise<Answer> {
  const base = new URL(test.stack.gateway.url);
  return new Promise((resolve, reject) => {
    let sent = 0;
    const request = http.request(
      {
        host: base.hostname,
        port: base.port,
        path,
        method: "POST",
        agent: new http.Agent({ keepAlive: true }),
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        headers: { ...headers, ...(options.declaredBytes !== undefined ? { "content-length": String(options.declaredBytes) } : {}) },
      },
      (response) => {
        const sentWhenAnswered = sent;
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Answer["body"], sentWhenAnswered }));
        // The rest of the body, after the answer, where the gateway keeps the connection to drain it.
        if (options.declaredBytes !== undefined && response.headers.connection !== "close" && !request.destroyed) {
          const rest = options.declaredBytes - sent;
          if (rest > 0) request.end(Buffer.alloc(rest, "b"));
        }
      },
    );
    // A gateway that cuts an unbounded body after answering makes later writes fail: expected.
    request.on("error", (error) => (request.destroyed && sent > 0 ? undefined : reject(error)));
    const first = Buffer.concat([Buffer.from(head), Buffer.alloc(Math.max(0, options.sendFirst - Buffer.byteLength(head)), "a")]);
    sent = first.length;
    request.write(first);
  });
}

const MULTIPART_HEAD = '--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":"mutation($files: [Upload!]!) { uploadDocuments(files: $files) { id } }","variables":{"files":[null]}}\r\n--xyz\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"1":["variables.files.0"]}\r\n--xyz\r\nContent-Disposition: form-data; name="1"; filename="withheld.md"\r\nContent-Type: text/markdown\r\n\r\n';
const FORM_HEAD = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="withheld.md"\r\nContent-Type: text/markdown\r\n\r\n';
const FORM = { "content-type": "multipart/form-data; boundary=xyz" };

describe("uploads without a valid token are refused before their bodies are read", () => {
  it("POST /documents without a token: 401 UNAUTHENTICATED while the client still withholds most of a 2 MB body, on a kept connection", async () => {
    const answer = await postWithheld("/documents", FORM, FORM_HEAD, { declaredBytes: 2 * 1024 * 1024, sendFirst: 1024 });
    expect(answer.status).toBe(401);
    expect(answer.body.errors![0]!.extensions.code).toBe("UNAUTHENTICATED");
    expect(answer.body.errors![0]!.message).toMatch(/Missing Authorization header/);
    expect(answer.sentWhenAnswered).toBe(1024);
    expect(answer.headers.connection).not.toBe("close");
  });

  it("a GraphQL multipart request with a token that does not verify: 401 naming what is wrong, before the file is sent", async () => {
    const answer = await postWithheld("/graphql", { ...FORM, authorization: "Bearer not-a-token", "apollo-require-preflight": "true" }, MULTIPART_HEAD, { declaredBytes: 2 * 1024 * 1024, sendFirst: 2048 });
    expect(answer.status).toBe(401);
    expect(answer.body.errors![0]!.extensions.code).toBe("UNAUTHENTICATED");
    expect(answer.sentWhenAnswered).toBe(2048);
  });

  it("a body declared larger than any upload, or not declared at all, is refused the same way and its connection cut", async () => {
    for (const [path, head, headers] of [
      ["/documents", FORM_HEAD, FORM],
      ["/graphql", MULTIPART_HEAD, { ...FORM, "apollo-require-preflight": "true" }],
    ] as const) {
      const declared = await postWithheld(path, headers, head, { declaredBytes: 1024 * 1024 * 1024, sendFirst: 1024 });
      expect([declared.status, declared.body.errors![0]!.extensions.code]).toEqual([401, "UNAUTHENTICATED"]);
      expect(declared.headers.connection).toBe("close");
      const chunked = await postWithheld(path, headers, head, { sendFirst: 1024 });
      expect([chunked.status, chunked.body.errors![0]!.extensions.code]).toEqual([401, "UNAUTHENTICATED"]);
      expect(chunked.headers.connection).toBe("close");
    }
  });

  it("a caller with a valid token is admitted: POST /documents stores the file", async () => {
    const form = new FormData();
    form.append("file", new Blob(["# Admitted\n\nThe admission runbook."], { type: "text/markdown" }), "admitted.md");
    const response = await fetch(new URL("/documents", test.stack.gateway.url), { method: "POST", headers: { authorization: `Bearer ${writer}` }, body: form });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { uploadDocument: { id: string; fileName: string } } };
    expect(body.data.uploadDocument.fileName).toBe("admitted.md");
  });

  it("a flood of anonymous uploads turns into 429 RATE_LIMITED with Retry-After for its address only", async () => {
    const statuses: number[] = [];
    let limited: Answer | undefined;
    for (let i = 0; i < ANONYMOUS_POINTS + 3; i += 1) {
      const answer = await postWithheld("/documents", FORM, FORM_HEAD, { declaredBytes: 4096, sendFirst: 512, localAddress: "127.0.0.2" });
      statuses.push(answer.status);
      if (answer.status === 429) limited = answer;
    }
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThan(0);
    expect(statuses.slice(-3)).toEqual([429, 429, 429]);
    expect(limited!.body.errors![0]!.extensions.code).toBe("RATE_LIMITED");
    expect(Number(limited!.headers["retry-after"])).toBeGreaterThan(0);
    // Another address has its own budget: still told what is missing, not to wait.
    const elsewhere = await postWithheld("/graphql", { ...FORM, "apollo-require-preflight": "true" }, MULTIPART_HEAD, { declaredBytes: 4096, sendFirst: 512, localAddress: "127.0.0.3" });
    expect(elsewhere.status).toBe(401);
  });
});

/** An admitted upload that sends its first kilobyte of a declared megabyte and then holds: it keeps its place. */
function heldUpload(token: string): { request: http.ClientRequest; answered: Promise<number>; flushed: Promise<void> } {
  const base = new URL(test.stack.gateway.url);
  let request!: http.ClientRequest;
  const answered = new Promise<number>((resolve) => {
    // A connection of its own: a kept-alive one an earlier answer closed would fail it before it is admitted.
    request = http.request({ host: base.hostname, port: base.port, path: "/documents", method: "POST", agent: new http.Agent({ keepAlive: true }), headers: { ...FORM, authorization: `Bearer ${token}`, "content-length": String(1024 * 1024) } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", () => resolve(0));
  });
  const flushed = new Promise<void>((resolve) => request.write(Buffer.concat([Buffer.from(FORM_HEAD), Buffer.alloc(1024, "a")]), () => resolve()));
  return { request, answered, flushed };
}

/** The gateway's `gateway_uploads_in_flight` gauge, as a scrape from this host reads it. */
async function uploadsInFlight(): Promise<number> {
  const text = await (await fetch(new URL("/metrics", test.stack.gateway.url))).text();
  const line = text.split("\n").find((candidate) => candidate.startsWith("gateway_uploads_in_flight "));
  expect(line).toBeDefined();
  return Number(line!.split(" ")[1]);
}

async function waitForUploadsInFlight(count: number): Promise<void> {
  let seen = await uploadsInFlight();
  for (let tries = 0; seen !== count && tries < 200; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    seen = await uploadsInFlight();
  }
  expect(seen).toBe(count);
}

/**
 * Holds uploads until the gateway has admitted them all, as its gauge says: a request that only
 * follows them on the wire may be decided first (each admission awaits its token's verification,
 * and those finish in any order on a loaded machine), and would then measure the wrong thing.
 */
async function holdUploads(tokens: string[]): Promise<ReturnType<typeof heldUpload>[]> {
  // The uploads an earlier test let go have given their places back.
  await waitForUploadsInFlight(0);
  const held = tokens.map((token) => heldUpload(token));
  await Promise.all(held.map((upload) => upload.flushed));
  await waitForUploadsInFlight(held.length);
  // None was answered: an answer now would be a refusal, and the test would measure the wrong thing.
  const early = await Promise.race([...held.map((upload) => upload.answered.then((status) => `answered ${status}`)), new Promise((resolve) => setTimeout(() => resolve("held"), 50))]);
  expect(early).toBe("held");
  return held;
}

async function smallUpload(token: string, fileName: string): Promise<{ status: number; code?: string; retryAfter: string | null }> {
  const form = new FormData();
  form.append("file", new Blob([`# ${fileName}\n\nA short note.`], { type: "text/markdown" }), fileName);
  const response = await fetch(new URL("/documents", test.stack.gateway.url), { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await response.json()) as { errors?: { extensions: { code: string } }[] };
  return { status: response.status, ...(body.errors ? { code: body.errors[0]!.extensions.code } : {}), retryAfter: response.headers.get("retry-after") };
}

describe("uploads in flight are bounded per user and per organization", () => {
  it("a user's upload beyond their bound in flight is OVERLOADED at once; a colleague is not held up; a place frees when an upload ends", async () => {
    const held = await holdUploads(Array.from({ length: MAX_UPLOADS_IN_FLIGHT_PER_USER }, () => writer));
    expect(await smallUpload(writer, "one-too-many.md")).toEqual({ status: 429, code: "OVERLOADED", retryAfter: "1" });
    const colleague = await tokenFor("org-admission", "cleo", ["writers"]);
    expect((await smallUpload(colleague, "colleague.md")).status).toBe(200);
    // One client gives up: its place is free again.
    held[0]!.request.destroy();
    await held[0]!.answered;
    let admitted = await smallUpload(writer, "after-one-ended.md");
    for (let tries = 0; admitted.status === 429 && tries < 50; tries += 1) admitted = await smallUpload(writer, "after-one-ended.md");
    expect(admitted.status).toBe(200);
    for (const upload of held) upload.request.destroy();
  });

  it("an organization's uploads beyond its bound are OVERLOADED; another organization's are not", async () => {
    const users = Math.ceil(MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION / MAX_UPLOADS_IN_FLIGHT_PER_USER);
    const tokens = await Promise.all(Array.from({ length: users }, (_, index) => tokenFor("org-busy", `busy-${index}`, ["writers"])));
    const held = await holdUploads(tokens.flatMap((token) => Array.from({ length: MAX_UPLOADS_IN_FLIGHT_PER_USER }, () => token)));
    const another = await tokenFor("org-busy", "busy-late", ["writers"]);
    expect(await smallUpload(another, "late.md")).toEqual({ status: 429, code: "OVERLOADED", retryAfter: "1" });
    expect((await smallUpload(await tokenFor("org-calm", "calm", ["writers"]), "calm.md")).status).toBe(200);
    for (const upload of held) upload.request.destroy();
  });
});
