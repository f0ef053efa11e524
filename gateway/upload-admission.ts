/**
 * Who may send an upload's body at all, decided from its headers before any byte of it is read:
 * `POST /documents` and GraphQL multipart requests both buffer up to the file limit (megabytes)
 * before the runtime sees the operation, and the runtime is where identity and rate limits are
 * checked. Without this, a client with no token could make the gateway read, parse and base64 a
 * whole file per request only to be told UNAUTHENTICATED at the end, as fast as it can send.
 *
 * A caller whose token verifies is admitted; the runtime then charges the operation and its
 * bytes to that caller as for any request. Anyone else is refused with the verifier's own
 * UNAUTHENTICATED message (what is missing or wrong), and spends the anonymous budget of their
 * address, as a readiness probe without a token does, so a flood of refusals turns into 429s.
 */
import type http from "node:http";
import { rateLimitBody, type RequestRateLimiter } from "../lib/graphql/rate-limit.js";
import { verifyBearerToken, type TokenSettings } from "../lib/tenancy/token.js";

/** The answer to a request refused before its body is read. */
export interface UploadRefusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

export function uploadAdmission(auth: TokenSettings, rateLimiter: RequestRateLimiter | null) {
  return async function admit(request: http.IncomingMessage): Promise<UploadRefusal | null> {
    let failure: unknown;
    try {
      await verifyBearerToken(request.headers.authorization, auth);
      return null;
    } catch (error) {
      failure = error;
    }
    const rejection = rateLimiter ? await rateLimiter.consume(null, request.socket.remoteAddress ?? "unknown") : null;
    if (rejection) {
      const [error] = rateLimitBody(rejection).errors;
      return { status: 429, code: String(error!.extensions.code), message: error!.message, headers: { "retry-after": String(rejection.retryAfterSeconds) } };
    }
    return { status: 401, code: "UNAUTHENTICATED", message: `Uploads need a valid token. ${(failure as Error).message}` };
  };
}
