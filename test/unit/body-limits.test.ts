/**
 * The request body limit and the document limit agree: the largest document DOCUMENT_MAX_BYTES
 * admits still fits, as base64 in an `uploadDocument` body, under the gateway's body limit, and a
 * larger setting is refused at start-up (12 MiB, the earlier maximum, is 16 MiB of base64 alone).
 */
import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { largestUploadableDocument, MAX_REQUEST_BODY_BYTES } from "../../lib/http-body.js";

const UPLOAD = `mutation UploadDocument($input: UploadDocumentInput!) { uploadDocument(input: $input) { id fileName status } }`;

describe("DOCUMENT_MAX_BYTES and the request body limit", () => {
  it("admits only documents whose upload body fits the body limit", () => {
    const largest = largestUploadableDocument();
    expect(loadConfig({ DOCUMENT_MAX_BYTES: String(largest) }).knowledgeBase.maxDocumentBytes).toBe(largest);
    const body = JSON.stringify({ query: UPLOAD, variables: { input: { fileName: `${"n".repeat(255)}.pdf`, category: "c".repeat(200), contentBase64: Buffer.alloc(largest).toString("base64") } } });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_REQUEST_BODY_BYTES);
  });

  it("refuses a document limit that no upload could carry", () => {
    expect(() => loadConfig({ DOCUMENT_MAX_BYTES: String(12 * 1024 * 1024) })).toThrow(ConfigError);
    expect(() => loadConfig({ DOCUMENT_MAX_BYTES: String(12 * 1024 * 1024) })).toThrow(/DOCUMENT_MAX_BYTES/);
  });
});
