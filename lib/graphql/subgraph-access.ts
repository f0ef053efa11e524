/**
 * Who may read what from a subgraph reached directly. The token rules are the same as at the
 * gateway (every data field needs a verified token, see subgraph-server.ts); on top of that the
 * subgraph's full SDL (`_service { sdl }`, which includes `@inaccessible` and internal fields
 * and directives the public API schema hides) is served only to the gateway or to a caller with
 * a valid token.
 *
 * The gateway proves itself with Hive's HMAC upstream signature: it signs each subgraph request
 * (HMAC-SHA256 over the stable JSON of its query and variables, with a secret shared by the
 * gateway and the subgraphs) in `extensions["hmac-signature"]`, and this module checks it with
 * the same serializer the signing plugin's own validator uses. The signature binds the document
 * and variables, not time: it tells the gateway's requests from a stranger's, it does not stop
 * a replay by someone who can already read the gateway's traffic.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ApolloServerPlugin } from "@apollo/server";
import { defaultParamsSerializer } from "@graphql-mesh/hmac-upstream-signature";
import { unauthenticated } from "./errors.js";
import { rootFieldNames } from "./root-fields.js";

export const GATEWAY_SIGNATURE_EXTENSION = "hmac-signature";

/** Whether a parsed GraphQL-over-HTTP body carries a valid signature of the gateway. */
export function isSignedByGateway(body: unknown, secret: string | null | undefined): boolean {
  if (!secret || !body || typeof body !== "object" || Array.isArray(body)) return false;
  const { query, variables, extensions } = body as { query?: unknown; variables?: unknown; extensions?: Record<string, unknown> };
  const signature = extensions?.[GATEWAY_SIGNATURE_EXTENSION];
  if (typeof signature !== "string" || signature.length > 200 || typeof query !== "string") return false;
  const payload = defaultParamsSerializer({ query, variables: variables as Record<string, unknown> | undefined });
  if (payload === undefined) return false;
  const expected = createHmac("sha256", secret).update(payload).digest();
  const given = Buffer.from(signature, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface AccessContext {
  /** True when the request carries the gateway's valid signature. */
  signedByGateway: boolean;
  /** True when the request carries a token that verified. */
  authenticated: boolean;
}

/** Refuses `_service` to requests that are neither signed by the gateway nor authenticated. */
export function serviceSdlAccessPlugin(): ApolloServerPlugin<AccessContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, document, operation }) {
          if (contextValue.signedByGateway || contextValue.authenticated) return;
          if (operation && rootFieldNames(document, operation).has("_service")) {
            throw unauthenticated("`_service` (this subgraph's SDL) is served only to the gateway or to callers with a valid token: send `Authorization: Bearer <token>`.");
          }
        },
      };
    },
  };
}
