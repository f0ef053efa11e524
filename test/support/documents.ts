/**
 * Documents through the gateway, as a client adds them: `uploadDocument` with a text file, then
 * `document(id){status}` polled until the indexer has made it searchable. Shared by the suites
 * that need a few documents in place before they search or answer.
 */
import { graphql } from "./graphql.js";

/** Uploads `text` as `fileName` for the token's caller and waits until the document is READY (60 s at most). */
export async function uploadReadyDocument(gatewayUrl: string, token: string, fileName: string, text: string): Promise<string> {
  const uploaded = await graphql(gatewayUrl, `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`, { input: { fileName, contentBase64: Buffer.from(text).toString("base64") } }, { token });
  if (uploaded.errors) throw new Error(`uploading ${fileName} failed: ${JSON.stringify(uploaded.errors)}`);
  const id: string = uploaded.data!.uploadDocument.id;
  for (let attempt = 0; attempt < 240; attempt++) {
    const status = (await graphql(gatewayUrl, `query($id: ID!) { document(id: $id) { status } }`, { id }, { token })).data?.document?.status;
    if (status === "READY") return id;
    if (status === "FAILED") throw new Error(`document ${fileName} FAILED to index`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`document ${fileName} did not reach READY within 60 s`);
}
