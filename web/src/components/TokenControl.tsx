/**
 * The token the app calls with: who it is, and a field to enter another (production pages carry
 * none; in development the dev token is used until one is entered). Changing it reloads the page,
 * so no answer cached for one identity is shown to another.
 */
import { useEffect, useId, useState } from "react";
import { currentToken, devToken, onTokenRefused, storedToken, storeToken, tokenClaims } from "../session";

export function TokenControl() {
  const [open, setOpen] = useState(() => currentToken() === null);
  const [value, setValue] = useState("");
  // Set once the gateway refused the token (401): the field opens and says why.
  const [refused, setRefused] = useState(false);
  const fieldId = useId();
  useEffect(
    () =>
      onTokenRefused(() => {
        setRefused(true);
        setOpen(true);
      }),
    [],
  );
  const claims = tokenClaims(currentToken());
  const source = storedToken() ? "entered" : devToken() ? "development" : null;

  return (
    <div className="token-control">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {claims ? `Token: ${claims.name ?? "signed in"}${claims.organizationId ? ` (${claims.organizationId})` : ""}` : "Token: none"}
      </button>
      {open ? (
        <form
          className="token-form"
          onSubmit={(event) => {
            event.preventDefault();
            storeToken(value || null);
            window.location.reload();
          }}
        >
          {refused ? <p className="token-refused">The gateway refused this token: enter a new one.</p> : null}
          <label htmlFor={fieldId}>Bearer token</label>
          <input id={fieldId} type="password" autoComplete="off" value={value} onChange={(event) => setValue(event.target.value)} placeholder="eyJ…" />
          <button type="submit">Use this token</button>
          {source === "entered" ? (
            <button
              type="button"
              onClick={() => {
                storeToken(null);
                window.location.reload();
              }}
            >
              Forget the entered token
            </button>
          ) : null}
          <p className="hint">{source === "development" ? "Using the development token the server started with." : "Get a token with npm run token."}</p>
        </form>
      ) : null}
    </div>
  );
}
