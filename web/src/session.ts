/**
 * Who the app calls the supergraph as. A token the person entered (kept in this browser's
 * localStorage) wins; otherwise, in development, the dev token the gateway wrote into the page
 * (gateway/web-app.ts, the same token GraphiQL sends). In production the page carries none and
 * the app asks for one.
 */
const STORAGE_KEY = "context-search-token";
const DEV_TOKEN_META = "context-search-dev-token";

export function devToken(): string | null {
  return document.querySelector<HTMLMetaElement>(`meta[name="${DEV_TOKEN_META}"]`)?.content || null;
}

export function storedToken(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function currentToken(): string | null {
  return storedToken() ?? devToken();
}

export function storeToken(token: string | null): void {
  try {
    if (token) localStorage.setItem(STORAGE_KEY, token.trim());
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage refused (private mode): the token lasts for this page only.
  }
}

/** The claims a person can read off their own token (never verified here: the gateway does that). */
export function tokenClaims(token: string | null): { name?: string; organizationId?: string; role?: string; exp?: number; teams?: string[] } | null {
  if (!token) return null;
  try {
    const payload = token.split(".")[1];
    if (!payload) return null;
    const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    const claims = JSON.parse(decodeURIComponent(Array.from(json, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join("")));
    return {
      name: claims.name,
      organizationId: claims.org ?? claims.organizationId ?? claims.organization_id,
      role: claims.role,
      exp: claims.exp,
      teams: Array.isArray(claims.teams) ? claims.teams.filter((team: unknown): team is string => typeof team === "string") : [],
    };
  } catch {
    return null;
  }
}

/**
 * A request was refused for its token (401 UNAUTHENTICATED): whoever shows an error says so
 * (ErrorMessage), and the token control opens its field, wherever on the page the error was.
 */
const TOKEN_REFUSED_EVENT = "context-search:token-refused";

export function reportTokenRefused(): void {
  window.dispatchEvent(new Event(TOKEN_REFUSED_EVENT));
}

/** Calls `listener` at each refusal; returns the function that stops listening. */
export function onTokenRefused(listener: () => void): () => void {
  window.addEventListener(TOKEN_REFUSED_EVENT, listener);
  return () => window.removeEventListener(TOKEN_REFUSED_EVENT, listener);
}
