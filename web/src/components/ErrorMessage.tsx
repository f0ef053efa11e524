import { useEffect } from "react";
import { readableError } from "../errors";
import { currentToken, reportTokenRefused, tokenClaims } from "../session";

/**
 * An error as a person reads it: what happened, what to do, and the code when there is one.
 * With `onRetry`, an error worth retrying (the gateway unreachable, a rate limit, a 5xx) offers
 * a Try again button; a refused token opens the token field (TokenControl) instead.
 */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const readable = readableError(error, { tokenExpiresAt: tokenClaims(currentToken())?.exp ?? null });
  const tokenAction = readable.action === "token";
  useEffect(() => {
    if (tokenAction) reportTokenRefused();
  }, [error, tokenAction]);
  return (
    <div role="alert" className="error-box" data-error-code={readable.code}>
      <strong>{readable.title}</strong>
      <p>
        {readable.detail}
        {readable.code ? <code className="error-code"> {readable.code}</code> : null}
      </p>
      {onRetry && readable.action === "retry" ? (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}
