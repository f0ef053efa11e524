/**
 * A subgraph that cannot be reached (connection refused, reset, DNS, the gateway's upstream
 * timeout) is an outage, not a bug of the gateway: the fields it owns are null, the rest of the
 * answer arrives, and the error at each null field says so with a code a client can switch on.
 *
 * Hive's HTTP executor reports such failures as `SUBREQUEST_HTTP_ERROR` (or `TIMEOUT_ERROR`)
 * with the driver's message ("connect ECONNREFUSED 10.0.3.7:4002") and the original error
 * attached; the runtime's error masking then sees a non-GraphQL original error and answers
 * "Unexpected error." with INTERNAL_SERVER_ERROR (HTTP 500 when the planner also dropped
 * `data`). This plugin replaces those errors, after execution and before masking, with
 *
 *   { message: "The search service could not answer; the fields it provides are null in this answer. Try again shortly.",
 *     path, extensions: { code: "SUBGRAPH_UNAVAILABLE", service: "search" } }
 *
 * which names no address and is not masked (it is our own GraphQL error), so the response is
 * HTTP 200 with partial data. The gateway's log keeps the driver's message.
 *
 * The runtime's upstream timeout throws its error from the subgraph executor where the HTTP
 * executor returns one as the call's result. The Rust planner gives a thrown GraphQL error no
 * path (it relocates only returned errors to the fields the call was for), so the error could
 * not say which field it nulled; the executor is wrapped here so that a timeout, like a refused
 * connection, is always the call's result, which both planners place at the fields it was for.
 *
 * When every root field of the operation failed this way, the Rust planner answers `data: null`
 * even where those fields are nullable; the spec's answer is each field null
 * (`{ "search": null }`), which is what this plugin then gives.
 *
 * Each root field an outage nulled gets its own error. Both planners ask a subgraph for all of
 * its root fields in a document in one call, and the Rust planner puts that call's error at the
 * first of them only (`{ searchProviders searchIndexStatus }`: one error, at `searchProviders`),
 * which would leave `searchIndexStatus` null with nothing saying why. Which subgraph resolves
 * each root field comes from the supergraph's join directives (`rootFieldOwners`).
 *
 * Nothing here remembers an outage: there is no breaker in front of the subgraphs, every call is
 * tried and bounded by the upstream timeout, so several gateway instances have no state about
 * their subgraphs to share. Taking a dead instance out of rotation is the load balancer's job
 * (its health checks on each subgraph instance's `/readyz`), per gateway like Envoy's outlier
 * detection; the resilience policies for vendors' APIs are per process too (lib/external-apis/policies.ts says why).
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { getOperationAST, GraphQLError, isNonNullType, Kind, parse, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from "graphql";
import type { Logger } from "../lib/logger.js";

/**
 * Codes of a subgraph call that got no GraphQL answer: the HTTP executor's (unreachable, or its
 * own timeout) and the runtime's upstream timeout (`UPSTREAM_TIMEOUT_MS`), which also carries
 * `http.status` 504 and so, unmapped, made the whole response a 504.
 */
const UNREACHABLE_CODES = new Set(["SUBREQUEST_HTTP_ERROR", "TIMEOUT_ERROR", "GATEWAY_TIMEOUT"]);
const TIMEOUT_CODES = new Set(["TIMEOUT_ERROR", "GATEWAY_TIMEOUT"]);

export function subgraphOutageErrors(logger: Logger, supergraphSdl: string): GatewayPlugin {
  const owners = rootFieldOwners(parse(supergraphSdl));
  return {
    // Runs after the runtime's own hooks (user plugins come after them), so this wraps the timeout.
    onSubgraphExecute({ executor, setExecutor }) {
      setExecutor(function outageAsResult(request) {
        const asResult = (error: unknown) => {
          if (error instanceof GraphQLError && isSubgraphUnreachable(error)) return { errors: [error] };
          throw error;
        };
        try {
          const result = executor(request);
          return isPromiseLike(result) ? Promise.resolve(result).catch(asResult) : result;
        } catch (error) {
          return asResult(error);
        }
      });
    },
    onExecute() {
      return {
        onExecuteDone({ args, result, setResult }) {
          // A streamed answer (`@defer`): each part's outage errors are coded as a whole answer's are.
          if (result && typeof result === "object" && Symbol.asyncIterator in result) return { onNext: ({ result: part, setResult: setPart }) => setPart(codedOutagesOf(part as StreamedPart, logger) as never) };
          if (!result || typeof result !== "object") return;
          const single = result as { data?: Record<string, unknown> | null; errors?: readonly GraphQLError[] };
          if (!single.errors?.some(isSubgraphUnreachable)) return;
          const onlyOutages = single.errors.every(isSubgraphUnreachable);
          const errors = single.errors.map((error) => (isSubgraphUnreachable(error) ? asOutage(error, logger) : error));
          let data = single.data;
          if (data == null && onlyOutages) {
            const keys = nullableRootKeys(args.document, args.operationName ?? undefined, args.schema as GraphQLSchema);
            if (keys) data = Object.fromEntries(keys.map((key) => [key, null]));
          }
          if (data) errors.push(...unexplainedNulls(args.document, args.operationName ?? undefined, args.schema as GraphQLSchema, data, errors, owners));
          setResult({ ...single, ...(data !== undefined ? { data } : {}), errors } as never);
        },
      };
    },
  };
}

interface StreamedPart {
  errors?: readonly GraphQLError[];
  incremental?: ReadonlyArray<{ errors?: readonly GraphQLError[] }>;
}

/** A part of a streamed answer with its unreachable-subgraph errors as SUBGRAPH_UNAVAILABLE. */
function codedOutagesOf(part: StreamedPart, logger: Logger): StreamedPart {
  const coded = (errors: readonly GraphQLError[] | undefined) => errors?.map((error) => (error instanceof GraphQLError && isSubgraphUnreachable(error) ? asOutage(error, logger) : error));
  return {
    ...part,
    ...(part.errors ? { errors: coded(part.errors) } : {}),
    ...(part.incremental ? { incremental: part.incremental.map((item) => (item.errors ? { ...item, errors: coded(item.errors) } : item)) } : {}),
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

function isSubgraphUnreachable(error: GraphQLError): boolean {
  for (let current: unknown = error; current instanceof GraphQLError; current = current.originalError) {
    const code = current.extensions?.code;
    if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return true;
  }
  return false;
}

function asOutage(error: GraphQLError, logger: Logger): GraphQLError {
  let service: string | null = null;
  for (let current: unknown = error; current instanceof GraphQLError && !service; current = current.originalError) {
    const name = current.extensions?.serviceName ?? current.extensions?.subgraphName;
    if (typeof name === "string") service = name;
  }
  const timedOut = isTimeout(error);
  logger.warn(`subgraph ${service ?? "(unknown)"} ${timedOut ? "timed out" : "unreachable"} at ${error.path?.join(".") ?? "(root)"}: ${error.message}`);
  const who = service ? `The ${service} service` : "A service this query needs";
  return new GraphQLError(`${who} could not answer${timedOut ? " in time" : ""}; the fields it provides are null in this answer. Try again shortly.`, {
    nodes: error.nodes,
    path: error.path,
    extensions: { code: "SUBGRAPH_UNAVAILABLE", ...(service ? { service } : {}) },
  });
}

function isTimeout(error: GraphQLError): boolean {
  for (let current: unknown = error; current instanceof GraphQLError; current = current.originalError) {
    const code = current.extensions?.code;
    if (typeof code === "string" && TIMEOUT_CODES.has(code)) return true;
  }
  return false;
}

/**
 * The response keys of the operation's root fields when every one of them is nullable; null
 * when any is non-null, conditional (@skip/@include) or behind a fragment: then `data: null`
 * stands.
 */
function nullableRootKeys(document: DocumentNode, operationName: string | undefined, schema: GraphQLSchema): string[] | null {
  const operation = getOperationAST(document, operationName);
  const rootType = operation ? schema.getRootType(operation.operation) : null;
  if (!operation || !rootType) return null;
  const fields = rootType.getFields();
  const keys: string[] = [];
  const selections: SelectionSetNode["selections"] = operation.selectionSet.selections;
  for (const selection of selections) {
    if (selection.kind !== Kind.FIELD || selection.directives?.length) return null;
    if (selection.name.value === "__typename") return null;
    const field = fields[selection.name.value];
    if (!field || isNonNullType(field.type)) return null;
    keys.push(selection.alias?.value ?? selection.name.value);
  }
  return keys;
}

/**
 * Which subgraphs resolve each root field (`Query.search` → `["search"]`), from the supergraph's
 * `@join__field(graph:)` directives and the names its `join__Graph` enum gives their values.
 */
export function rootFieldOwners(supergraph: DocumentNode): Map<string, string[]> {
  const graphNames = new Map<string, string>();
  const rootTypes = new Set(["Query", "Mutation"]);
  for (const definition of supergraph.definitions) {
    if (definition.kind === Kind.SCHEMA_DEFINITION) for (const root of definition.operationTypes) rootTypes.add(root.type.name.value);
    if (definition.kind !== Kind.ENUM_TYPE_DEFINITION || definition.name.value !== "join__Graph") continue;
    for (const value of definition.values ?? []) {
      const name = value.directives?.find((directive) => directive.name.value === "join__graph")?.arguments?.find((argument) => argument.name.value === "name")?.value;
      graphNames.set(value.name.value, name?.kind === Kind.STRING ? name.value : value.name.value.toLowerCase());
    }
  }
  const owners = new Map<string, string[]>();
  for (const definition of supergraph.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || !rootTypes.has(definition.name.value)) continue;
    for (const field of definition.fields ?? []) {
      const graphs = (field.directives ?? [])
        .filter((directive) => directive.name.value === "join__field")
        .map((directive) => directive.arguments?.find((argument) => argument.name.value === "graph")?.value)
        .flatMap((graph) => (graph?.kind === Kind.ENUM ? [graphNames.get(graph.value) ?? graph.value] : []));
      owners.set(`${definition.name.value}.${field.name.value}`, graphs);
    }
  }
  return owners;
}

/**
 * An outage error for each root field of the operation that is null, has no error of its own,
 * and belongs to a subgraph another field's outage error names: the same message and code, at
 * its own path.
 */
function unexplainedNulls(
  document: DocumentNode,
  operationName: string | undefined,
  schema: GraphQLSchema,
  data: Record<string, unknown>,
  errors: readonly GraphQLError[],
  owners: Map<string, string[]>,
): GraphQLError[] {
  const outageOf = new Map<string, GraphQLError>();
  for (const error of errors) {
    const service = error.extensions?.code === "SUBGRAPH_UNAVAILABLE" ? error.extensions.service : undefined;
    if (typeof service === "string") outageOf.set(service, error);
  }
  const operation = getOperationAST(document, operationName);
  const rootType = operation ? schema.getRootType(operation.operation) : null;
  if (outageOf.size === 0 || !operation || !rootType) return [];
  const explained = new Set(errors.map((error) => error.path?.[0]));
  const added: GraphQLError[] = [];
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const key = selection.alias?.value ?? selection.name.value;
    if (data[key] !== null || explained.has(key)) continue;
    const outage = (owners.get(`${rootType.name}.${selection.name.value}`) ?? []).map((owner) => outageOf.get(owner)).find((error) => error !== undefined);
    if (!outage) continue;
    explained.add(key);
    added.push(new GraphQLError(outage.message, { path: [key], extensions: outage.extensions }));
  }
  return added;
}
