/**
 * Documents through the gateway, as a client adds them: `uploadDocument` with a file, then
 * `document(id){status}` polled until the indexer has made it searchable. Shared by the suites
 * that need documents in place before they search or answer; a suite that asserts on the states
 * in between (PENDING, INDEXING, FAILED) polls for itself.
 */
import { graphql } from "./graphql.js";

/** What `UploadDocumentInput` takes besides the file's name and bytes. */
export interface DocumentUploadOptions {
  mediaType?: string;
  category?: string;
  shareWithTeamId?: string;
  knowledgeBaseId?: string;
}

const READY_WITHIN_MS = 60_000;
const POLL_EVERY_MS = 250;

/** Uploads `content` (text is sent as UTF-8) as `fileName` for the token's caller and returns its id, without waiting for the indexer. */
export async function uploadPendingDocument(gatewayUrl: string, token: string, fileName: string, content: string | Uint8Array, options: DocumentUploadOptions = {}): Promise<string> {
  const input = { ...options, fileName, contentBase64: Buffer.from(content).toString("base64") };
  const uploaded = await graphql(gatewayUrl, `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`, { input }, { token });
  if (uploaded.errors || !uploaded.data?.uploadDocument) throw new Error(`uploading ${fileName} failed: ${JSON.stringify(uploaded.errors)}`);
  return uploaded.data.uploadDocument.id as string;
}

/** Uploads `content` as `fileName` for the token's caller and waits until the document is READY (60 s at most). */
export async function uploadReadyDocument(gatewayUrl: string, token: string, fileName: string, content: string | Uint8Array, options: DocumentUploadOptions = {}): Promise<string> {
  const id = await uploadPendingDocument(gatewayUrl, token, fileName, content, options);
  await waitForReadyDocuments(gatewayUrl, token, [id]);
  return id;
}

/**
 * Waits until every one of `ids` is READY for the token's caller (60 s at most for all), so a
 * suite can upload several documents and let the indexer work on them together. A FAILED
 * document rejects at once with its name and reason: waiting out the timeout would hide why.
 */
export async function waitForReadyDocuments(gatewayUrl: string, token: string, ids: readonly string[]): Promise<void> {
  const waiting = new Map<string, string>(ids.map((id) => [id, `${id} (not read yet)`]));
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    for (const id of [...waiting.keys()]) {
      const response = await graphql(gatewayUrl, `query($id: ID!) { document(id: $id) { fileName status failureReason } }`, { id }, { token });
      const document = response.data?.document as { fileName: string; status: string; failureReason: string | null } | null | undefined;
      // An error is kept for the timeout's message and polled again: a busy machine may time out one read.
      if (response.errors) waiting.set(id, `${document?.fileName ?? id}: ${JSON.stringify(response.errors)}`);
      else if (!document) throw new Error(`document ${id} is not visible to this token: was it uploaded by another caller?`);
      else if (document.status === "READY") waiting.delete(id);
      else if (document.status === "FAILED") throw new Error(`document ${document.fileName} (${id}) FAILED to index: ${document.failureReason}`);
      else waiting.set(id, `${document.fileName} ${document.status}`);
    }
    if (waiting.size === 0) return;
    if (Date.now() > deadline) throw new Error(`${waiting.size} of ${ids.length} documents did not reach READY within ${READY_WITHIN_MS / 1000} s: ${[...waiting.values()].join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
}
