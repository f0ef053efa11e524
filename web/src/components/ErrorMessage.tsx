import { readableError } from "../errors";

/** An error as a person reads it: what happened, what to do, and the code when there is one. */
export function ErrorMessage({ error }: { error: unknown }) {
  const readable = readableError(error);
  return (
    <div role="alert" className="error-box">
      <strong>{readable.title}</strong>
      <p>
        {readable.detail}
        {readable.code ? <code className="error-code"> {readable.code}</code> : null}
      </p>
    </div>
  );
}
