/**
 * Documents through the gateway, as a frontend uploads and lists them: Markdown and PDF
 * uploads, access scopes (own, shared with a team, private, other organizations), deletion,
 * and the errors a bad upload gets.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PDFDocument, StandardFonts } from "pdf-lib";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";
import { flateBombPdf, manyParagraphsDocx } from "../support/document-fixtures.js";

let db: TestDatabase;
let stack: RunningStack;
let owner: string;
let teammate: string;
let outsider: string;

const UPLOAD = `mutation Upload($input: UploadDocumentInput!) {
  uploadDocument(input: $input) { id fileName format mediaType category status sharedWithTeamId ownerId sizeBytes contentHash progress { indexedChunks totalChunks } }
}`;
const LIST = `{ documents(first: 10) { nodes { id fileName } pageInfo { hasNextPage } } }`;

const base64 = (text: string | Uint8Array) => Buffer.from(text).toString("base64");

async function pdfWithText(lines: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  lines.forEach((line, index) => page.drawText(line, { x: 50, y: 780 - index * 18, size: 12, font }));
  return pdf.save();
}

const upload = (token: string, input: Record<string, unknown>) => graphql(stack.gateway.url, UPLOAD, { input }, { token });

beforeAll(async () => {
  ({ db, stack } = await startTestStack({ SEARCH_INDEXER: "false" }));
  owner = await tokenFor("org-kb", "olivia", ["platform-team"]);
  teammate = await tokenFor("org-kb", "tom", ["platform-team"]);
  outsider = await tokenFor("org-other", "otto", ["platform-team"]);
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("documents through the gateway", () => {
  let sharedId: string;
  let privateId: string;

  it("uploads Markdown shared with a team and a private PDF, both PENDING with their metadata", async () => {
    const markdown = await upload(owner, {
      fileName: "runbook.md",
      contentBase64: base64("# Deploys\n\nRoll back with `kubectl rollout undo`.\n\n## Canary\n\nShift 5% of traffic first."),
      category: "runbooks",
      shareWithTeamId: "platform-team",
    });
    expect(markdown.errors).toBeUndefined();
    expect(markdown.data!.uploadDocument).toMatchObject({ fileName: "runbook.md", format: "MARKDOWN", mediaType: "text/markdown", category: "runbooks", status: "PENDING", sharedWithTeamId: "platform-team", ownerId: "olivia" });
    expect(markdown.data!.uploadDocument.contentHash).toMatch(/^[0-9a-f]{64}$/);
    sharedId = markdown.data!.uploadDocument.id;

    const pdf = await upload(owner, { fileName: "salaries.pdf", contentBase64: base64(await pdfWithText(["Quarterly salary bands", "Confidential"])) });
    expect(pdf.errors).toBeUndefined();
    expect(pdf.data!.uploadDocument).toMatchObject({ format: "PDF", mediaType: "application/pdf", sharedWithTeamId: null });
    privateId = pdf.data!.uploadDocument.id;
  });

  it("shows the owner both, a teammate only the shared one, and another organization nothing", async () => {
    const mine = await graphql(stack.gateway.url, LIST, {}, { token: owner });
    expect(mine.data!.documents.nodes.map((node: { id: string }) => node.id).sort()).toEqual([sharedId, privateId].sort());
    const theirs = await graphql(stack.gateway.url, LIST, {}, { token: teammate });
    expect(theirs.data!.documents.nodes.map((node: { id: string }) => node.id)).toEqual([sharedId]);
    const byId = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { id } }`, { id: privateId }, { token: teammate });
    expect(byId.data!.document).toBeNull();
    const outside = await graphql(stack.gateway.url, LIST, {}, { token: outsider });
    expect(outside.data!.documents.nodes).toEqual([]);
    const outsideById = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { id } }`, { id: sharedId }, { token: outsider });
    expect(outsideById.data!.document).toBeNull();
  });

  it("resolves documents as entities only within the caller's scope", async () => {
    const subgraph = stack.subgraphs.find((candidate) => candidate.name === "knowledge-base")!;
    const query = `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Document { id fileName } } }`;
    const representations = [{ __typename: "Document", id: sharedId }, { __typename: "Document", id: privateId }];
    const asTeammate = await graphql(subgraph.url, query, { representations }, { token: teammate });
    expect(asTeammate.data!._entities).toEqual([{ id: sharedId, fileName: "runbook.md" }, null]);
  });

  it("lets only the owner delete: a teammate is FORBIDDEN, an outsider NOT_FOUND", async () => {
    const remove = `mutation($id: ID!) { deleteDocument(id: $id) { id } }`;
    expect(errorCodes(await graphql(stack.gateway.url, remove, { id: sharedId }, { token: teammate }))).toEqual(["FORBIDDEN"]);
    expect(errorCodes(await graphql(stack.gateway.url, remove, { id: sharedId }, { token: outsider }))).toEqual(["NOT_FOUND"]);
    const deleted = await graphql(stack.gateway.url, remove, { id: privateId }, { token: owner });
    expect(deleted.data!.deleteDocument).toEqual({ id: privateId });
    const gone = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { id } }`, { id: privateId }, { token: owner });
    expect(gone.data!.document).toBeNull();
  });

  it.each([
    ["an empty file", { fileName: "empty.txt", contentBase64: "" }, "EMPTY_FILE"],
    ["a corrupt PDF", { fileName: "broken.pdf", contentBase64: base64("%PDF-1.7\n1 0 obj << /Type /Catalog") }, "CORRUPT_FILE"],
    ["an unsupported type", { fileName: "photo.png", contentBase64: base64(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])) }, "UNSUPPORTED_TYPE"],
  ])("answers %s with BAD_USER_INPUT naming the problem, and stores nothing", async (_name, input, reason) => {
    const before = (await graphql(stack.gateway.url, LIST, {}, { token: owner })).data!.documents.nodes.length;
    const response = await upload(owner, input);
    expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
    expect(response.errors![0]!.extensions).toMatchObject({ field: "input.contentBase64", reason });
    expect((await graphql(stack.gateway.url, LIST, {}, { token: owner })).data!.documents.nodes.length).toBe(before);
  });

  it("refuses a category over 100 characters, a team the uploader is not in, and a file over the size limit before decoding it", async () => {
    const content = base64("hello");
    expect((await upload(owner, { fileName: "a.txt", contentBase64: content, category: "c".repeat(101) })).errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.category" });
    expect((await upload(owner, { fileName: "a.txt", contentBase64: content, shareWithTeamId: "finance" })).errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.shareWithTeamId" });
    const tooLarge = await upload(owner, { fileName: "big.txt", contentBase64: "A".repeat(14_000_004) });
    expect(tooLarge.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "FILE_TOO_LARGE" });
  });
});

describe("hostile files through the gateway", () => {
  it("refuses a Flate-bomb PDF and a DOCX of a million paragraphs with their reason, while another organization's upload is stored", async () => {
    const [pdfBomb, paragraphs, other] = await Promise.all([
      upload(owner, { fileName: "bomb.pdf", contentBase64: base64(flateBombPdf(1024)) }),
      upload(owner, { fileName: "words.docx", contentBase64: base64(manyParagraphsDocx(1_000_000)) }),
      upload(outsider, { fileName: "small.md", contentBase64: base64("# Small\n\nStill served.") }),
    ]);
    expect(other.errors).toBeUndefined();
    expect(other.data!.uploadDocument).toMatchObject({ fileName: "small.md", status: "PENDING" });
    for (const refused of [pdfBomb, paragraphs]) {
      expect(refused.status).toBe(200);
      expect(refused.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.contentBase64", reason: "DECOMPRESSION_LIMIT" });
      expect(refused.errors![0]!.message).toMatch(/decompresses (to )?more than/);
    }
  });
});

describe("POST /documents (multipart upload)", () => {
  const endpoint = () => stack.gateway.url.replace("/graphql", "/documents");
  const form = (content: string | Uint8Array, fileName: string, fields: Record<string, string> = {}) => {
    const body = new FormData();
    body.set("file", new Blob([typeof content === "string" ? content : new Uint8Array(content)], { type: fileName.endsWith(".pdf") ? "application/pdf" : "text/markdown" }), fileName);
    for (const [name, value] of Object.entries(fields)) body.set(name, value);
    return body;
  };

  it("accepts a browser-style form upload and answers with the new document", async () => {
    const response = await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form("# Oncall\n\nPage the secondary after 15 minutes.", "oncall.md", { category: "runbooks", shareWithTeamId: "platform-team" }) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { uploadDocument: Record<string, unknown> } };
    expect(body.data.uploadDocument).toMatchObject({ fileName: "oncall.md", format: "MARKDOWN", category: "runbooks", sharedWithTeamId: "platform-team", status: "PENDING" });
    const pdf = await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form(await pdfWithText(["Escalation policy"]), "escalation.pdf") });
    expect(((await pdf.json()) as { data: { uploadDocument: { format: string } } }).data.uploadDocument.format).toBe("PDF");
  });

  it("refuses a field it does not take, naming it, and passes knowledgeBaseId on to uploadDocument's rules", async () => {
    const misspelt = await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form("# Notes", "notes.md", { knowledgeBase: "kb-1", categry: "x" }) });
    expect(misspelt.status).toBe(400);
    const refused = (await misspelt.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(refused.errors[0]!.extensions.code).toBe("BAD_USER_INPUT");
    expect(refused.errors[0]!.message).toMatch(/"knowledgeBase", "categry"/);
    expect(refused.errors[0]!.message).toMatch(/`knowledgeBaseId`/);
    // Not stored as a private document: the knowledge base is looked up, and one that does not exist refused.
    const before = await db.database.prisma.document.count();
    const into = await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form("# Notes", "notes.md", { knowledgeBaseId: "00000000-0000-4000-8000-000000000000" }) });
    const intoBody = (await into.json()) as { data?: { uploadDocument: unknown }; errors?: { extensions: { code: string } }[] };
    expect(intoBody.data?.uploadDocument ?? null).toBeNull();
    expect(intoBody.errors?.[0]?.extensions.code).toMatch(/NOT_FOUND|BAD_USER_INPUT/);
    expect(await db.database.prisma.document.count()).toBe(before);
  });

  it("refuses an upload without a token (401), without a file (400), not as a form (415), and too large (413) before reading it", async () => {
    expect((await fetch(endpoint(), { method: "POST", body: form("hello", "a.md") })).status).toBe(401);
    const noFile = new FormData();
    noFile.set("category", "x");
    expect((await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: noFile })).status).toBe(400);
    expect((await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" }, body: "{}" })).status).toBe(415);
    // The gateway answers 413 from the declared length alone, before reading any of the body.
    const tooLarge = await new Promise<number>((resolve, reject) => {
      const request = http.request(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}`, "content-type": "multipart/form-data; boundary=x", "content-length": String(50 * 1024 * 1024) } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.write("--x\r\n");
    });
    expect(tooLarge).toBe(413);
    const corrupt = await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form("%PDF-1.7 broken", "broken.pdf") });
    const corruptBody = (await corrupt.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(corruptBody.errors[0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "CORRUPT_FILE" });
  });

  it("reads a UTF-8 file name as UTF-8 (as browsers and curl send it) and stores it in NFC; a bidirectional override is refused", async () => {
    // A form written byte by byte: the file name's UTF-8 bytes raw in `filename="..."`, decomposed (NFD) as macOS writes it.
    const multipart = (fileName: string, parameter = "filename") =>
      Buffer.concat([
        Buffer.from(`--b0undary\r\nContent-Disposition: form-data; name="category"\r\n\r\nnotes\r\n`),
        Buffer.from(`--b0undary\r\nContent-Disposition: form-data; name="file"; ${parameter}=`),
        parameter === "filename" ? Buffer.from(`"${fileName}"`, "utf8") : Buffer.from(`UTF-8''${encodeURIComponent(fileName)}`),
        Buffer.from(`\r\nContent-Type: text/markdown\r\n\r\n# Notes\n\nUnicode names.\r\n--b0undary--\r\n`),
      ]);
    const send = (fileName: string, parameter?: string) =>
      fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}`, "content-type": "multipart/form-data; boundary=b0undary" }, body: multipart(fileName, parameter) });
    const decomposed = "Re\u0301sume\u0301 \u2013 \u65e5\u672c\u8a9e \ud83d\udcc4.md";
    const accepted = await send(decomposed);
    expect(accepted.status).toBe(200);
    const stored = ((await accepted.json()) as { data: { uploadDocument: { fileName: string } } }).data.uploadDocument.fileName;
    expect(stored).toBe("R\u00e9sum\u00e9 \u2013 \u65e5\u672c\u8a9e \ud83d\udcc4.md");
    expect(stored).toBe(decomposed.normalize("NFC"));
    // RFC 5987's filename* (older clients send it; Node 20's form parser refused the whole body for it).
    const extended = await send("\u00fcber \"quoted\".md", "filename*");
    expect(extended.status).toBe(200);
    expect(((await extended.json()) as { data: { uploadDocument: { fileName: string; category: string } } }).data.uploadDocument).toMatchObject({ fileName: '\u00fcber "quoted".md', category: "notes" });
    // Through FormData too (fetch writes the name as UTF-8 the same way).
    const viaFormData = await fetch(endpoint(), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form("# Other", "\u00fcber.md") });
    expect(((await viaFormData.json()) as { data: { uploadDocument: { fileName: string } } }).data.uploadDocument.fileName).toBe("\u00fcber.md");

    for (const disguised of ["invoice\u202efdp.md", "a\u2066b.md", "\u200fname.md"]) {
      const refused = (await (await send(disguised)).json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(refused.errors[0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.fileName" });
      expect(refused.errors[0]!.message).toMatch(/bidirectional control characters.*U\+(202E|2066|200F)/);
    }
  });

  it("refuses control characters and bidirectional controls in uploadDocument's fileName too, and stores it in NFC", async () => {
    const rlo = await upload(owner, { fileName: "report\u202ecod.md", contentBase64: base64("# x") });
    expect(rlo.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.fileName" });
    const tab = await upload(owner, { fileName: "a\tb.md", contentBase64: base64("# x") });
    expect(tab.errors![0]!.message).toMatch(/input\.fileName: must not contain control characters \(found U\+0009 at index 1\)/);
    const nfd = await upload(owner, { fileName: "Cafe\u0301.md", contentBase64: base64("# Café") });
    expect(nfd.data!.uploadDocument.fileName).toBe("Caf\u00e9.md");
  });

  it("answers a CORS preflight for listed origins only", async () => {
    const allowed = await fetch(endpoint(), { method: "OPTIONS", headers: { origin: "http://localhost:3000", "access-control-request-method": "POST" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    const other = await fetch(endpoint(), { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});
