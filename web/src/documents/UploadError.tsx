/**
 * Why an upload failed, as ErrorMessage shows any request's error, plus what only uploads have:
 * the knowledge base's reason code (`extensions.reason`: UNSUPPORTED_TYPE, FILE_TOO_LARGE,
 * INVALID_ENCODING, …, lib/documents/document-error.ts) beside the GraphQL code, and the message
 * without the input field's path it starts with ("input.contentBase64: "), which means nothing
 * to the person who chose the file.
 */
import { CombinedGraphQLErrors } from "@apollo/client/errors";
import { readableError } from "../errors";

export function UploadError({ error }: { error: unknown }) {
  const readable = readableError(error);
  const first = CombinedGraphQLErrors.is(error) ? error.errors[0] : undefined;
  const reason = typeof first?.extensions?.reason === "string" ? first.extensions.reason : undefined;
  const detail = CombinedGraphQLErrors.is(error) ? readable.detail.replace(/^input\.[\w.]+: /, "") : readable.detail;
  const codes = [reason, readable.code].filter(Boolean).join(" · ");
  return (
    <div role="alert" className="error-box">
      <strong>{CombinedGraphQLErrors.is(error) ? "The upload was refused" : readable.title}</strong>
      <p>
        {detail}
        {codes ? <code className="error-code"> {codes}</code> : null}
      </p>
    </div>
  );
}
