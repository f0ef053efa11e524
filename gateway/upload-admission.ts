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
 *
 * An admitted upload holds memory until its handler is done with it (the file, its base64, the
 * JSON around it), whether or not its client is still there: a few per user, more per
 * organization and a bound for the process, so that one caller's parallel uploads cannot take
 * the memory every other organization's requests need. Counted per process on purpose: the
 * memory they protect is the process's (docs/shared-state.md).
 */
import type http from "node:http";
import { rateLimitBody, remoteAddressOf, type RequestRateLimiter } from "../lib/graphql/rate-limit.js";
import { verifyBearerToken, type TenantContext, type TokenSettings } from "../lib/tenancy/token.js";

/** The answer to a request refused before its body is read. */
export interface UploadRefusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

/** Uploads one user may have in flight in this process (parsing and running), each up to the file limits. */
export const MAX_UPLOADS_IN_FLIGHT_PER_USER = 4;
/** Uploads one organization may have in flight in this process. */
export const MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION = 12;
/** Uploads in flight in this process, whoever sent them. */
export const MAX_UPLOADS_IN_FLIGHT = 32;

/** Admitted, holding a place until release() (idempotent: call it when the handler is done with the upload), or refused. */
export type UploadAdmission = { refusal: UploadRefusal; release?: never } | { refusal?: never; release(): void };

/** Admits uploads (see the module comment); `inFlight()` is how many hold a place now, for the gateway's metrics. */
export interface UploadAdmitter {
  (request: http.IncomingMessage): Promise<UploadAdmission>;
  inFlight(): number;
}

export function uploadAdmission(auth: TokenSettings, rateLimiter: RequestRateLimiter | null): UploadAdmitter {
  const inFlight = new Map<string, number>();
  let total = 0;
  const busy = (message: string, status: number): UploadAdmission => ({ refusal: { status, code: "OVERLOADED", message, headers: { "retry-after": "1" } } });

  const admit = async function admit(request: http.IncomingMessage): Promise<UploadAdmission> {
    let caller: TenantContext;
    try {
      caller = await verifyBearerToken(request.headers.authorization, auth);
    } catch (failure) {
      const rejection = rateLimiter ? await rateLimiter.consume(null, remoteAddressOf(request)) : null;
      if (rejection) {
        const [error] = rateLimitBody(rejection).errors;
        return { refusal: { status: 429, code: String(error!.extensions.code), message: error!.message, headers: { "retry-after": String(rejection.retryAfterSeconds) } } };
      }
      return { refusal: { status: 401, code: "UNAUTHENTICATED", message: `Uploads need a valid token. ${(failure as Error).message}` } };
    }
    const user = `user\u0000${caller.organizationId}\u0000${caller.userId}`;
    const organization = `organization\u0000${caller.organizationId}`;
    if ((inFlight.get(user) ?? 0) >= MAX_UPLOADS_IN_FLIGHT_PER_USER) return busy(`You already have ${MAX_UPLOADS_IN_FLIGHT_PER_USER} uploads in progress: send the next when one of them is answered.`, 429);
    if ((inFlight.get(organization) ?? 0) >= MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION) return busy(`Your organization already has ${MAX_UPLOADS_IN_FLIGHT_PER_ORGANIZATION} uploads in progress: retry in a few seconds.`, 429);
    if (total >= MAX_UPLOADS_IN_FLIGHT) return busy(`The server is busy with ${MAX_UPLOADS_IN_FLIGHT} uploads: retry in a few seconds.`, 503);
    for (const key of [user, organization]) inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    total += 1;
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        total -= 1;
        for (const key of [user, organization]) {
          const left = (inFlight.get(key) ?? 1) - 1;
          if (left === 0) inFlight.delete(key);
          else inFlight.set(key, left);
        }
      },
    };
  };
  return Object.assign(admit, { inFlight: () => total });
}
