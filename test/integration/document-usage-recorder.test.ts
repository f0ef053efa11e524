/**
 * The document usage recorder against a real database: hits are written per caller after a
 * flush, and a hit the database refuses (a chunk id that is not a UUID fails the caller's whole
 * UPDATE) costs only itself, not the caller's other hits in the batch.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore, type NewDocument } from "../../subgraphs/knowledge-base/document-store.js";
import { DocumentUsageRecorder } from "../../subgraphs/knowledge-base/search/usage-recorder.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { recordingLogger } from "../support/recording-logger.js";

const tenant = (organizationId: string, userId: string, teamIds: string[] = []): TenantContext => ({ organizationId, userId, teamIds, role: "member" as const, userName: null, userEmail: null });
const ann = tenant("acme", "ann", ["platform-team"]);
const bob = tenant("acme", "bob", ["platform-team"]);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function upload(fileName: string, text: string): NewDocument {
  return { fileName, mediaType: "text/markdown", format: "markdown", category: null, sizeBytes: Buffer.byteLength(text), contentHash: sha256(text), teamId: "platform-team", text };
}

let db: TestDatabase;
let store: DocumentStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.database.prisma);
});
afterAll(async () => db?.dispose());

describe("document usage recorder", () => {
  it("counts every caller's hits once flushed, and loses only the hit the database refuses", async () => {
    const document = (await store.create(ann, upload("usage-recorder.md", "usage recorder"))).document;
    const chunks = await store.replaceChunks("acme", document.id, [
      { chunkIndex: 0, text: "one", headingPath: [], page: null, startOffset: 0, endOffset: 3, tokenCount: 1, contentHash: sha256("one") },
      { chunkIndex: 1, text: "two", headingPath: [], page: null, startOffset: 3, endOffset: 6, tokenCount: 1, contentHash: sha256("two") },
    ]);
    const logger = recordingLogger();
    const recorder = new DocumentUsageRecorder(store, logger);
    recorder.record(ann, [chunks[0]!, "not-a-uuid", chunks[1]!]);
    recorder.record(ann, [chunks[0]!]);
    recorder.record(bob, [chunks[1]!]);
    expect((await store.findByIds(ann, [document.id]))[0]!.usageCount).toBe(0);
    await recorder.flush();

    const [after] = await store.findByIds(ann, [document.id]);
    // Ann's three good hits and Bob's one; the malformed id alone is lost.
    expect(after!.usageCount).toBe(4);
    expect(after!.lastUsedAt).toBeInstanceOf(Date);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(/could not write 1 of 5 document hits: /);
  });
});
