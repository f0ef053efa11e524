/**
 * Identity at the gateway: the token is verified once, before anything is planned, and a request
 * that reads or writes data without a valid token is answered HTTP 401 `UNAUTHENTICATED` without
 * calling any subgraph. Subgraphs still verify the token themselves (with the same code, see
 * lib/tenancy/token.ts): this is the first wall, not the only one.
 *
 * What needs a token: every root field except `__typename`, `__schema` and `__type`, so that
 * health probes and schema explorers (GraphiQL, Sandbox) work without one outside production.
 * A token that is present but does not verify is refused whatever the operation asks for.
 *
 * Why our own plugin and not `genericAuth` or the JWT plugin: the same verifier (HS256 secret and
 * JWKS keys, required `exp`, maximum lifetime, configurable claims) must run in the gateway and
 * in every subgraph, which are Apollo Servers; one implementation keeps the two from disagreeing.
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import type { DocumentNode } from "graphql";
import { unauthenticated } from "../lib/graphql/errors.js";
import { META_FIELDS, rootFieldNames, selectedOperation } from "../lib/graphql/root-fields.js";
import { tokenVerifier, type TenantContext, type TokenSettings } from "../lib/tenancy/token.js";

export interface GatewayAuthentication {
  plugin: GatewayPlugin;
  /** The verified caller of a request, once its parameters have been read; null without a valid token. */
  tenantOf(request: Request): TenantContext | null;
}

export function gatewayAuthentication(settings: TokenSettings): GatewayAuthentication {
  const verifier = tokenVerifier(settings);
  const tenants = new WeakMap<Request, TenantContext>();

  const plugin: GatewayPlugin = {
    onParams({ request, setResult }) {
      const authorization = request.headers.get("authorization");
      if (!authorization) return;
      const known = verifier.known(authorization);
      if (known) {
        tenants.set(request, known);
        return;
      }
      return verifier.verify(authorization).then(
        (tenant) => void tenants.set(request, tenant),
        (error: unknown) => setResult({ errors: [error as Error] } as never),
      );
    },
    onExecute({ args, setResultAndStopExecution }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (request && tenants.has(request)) return;
      if (!selectsData(args.document, args.operationName)) return;
      setResultAndStopExecution({
        errors: [unauthenticated("Missing Authorization header: send `Authorization: Bearer <token>` (every field but __typename, __schema and __type needs one).")],
      });
    },
  };
  return { plugin, tenantOf: (request) => tenants.get(request) ?? null };
}

/** Whether the operation selects any root field other than the schema's own meta fields. */
export function selectsData(document: DocumentNode, operationName?: string | null): boolean {
  const operation = selectedOperation(document, operationName);
  if (!operation) return true;
  return [...rootFieldNames(document, operation)].some((name) => !META_FIELDS.has(name));
}
