/**
 * OpenTelemetry traces for our own servers: one tracer provider per server (the gateway, each
 * subgraph), exporting over OTLP/HTTP (JSON) to the configured endpoint, and helpers that our
 * code calls to open spans.
 *
 * Off by default. With no endpoint `startServiceTracing` returns null: no provider, no exporter,
 * no global context manager or propagator is registered, none of the SDK's modules is even
 * loaded, and `withSpan` runs its work directly after one lookup in the (empty) active context.
 *
 * Why a provider per server rather than the global one: `npm start` runs the gateway and all the
 * subgraphs in one process, and each should still report as its own service. So the global
 * tracer provider is never set; a subgraph's incoming request puts its server's tracer into the
 * active context (SERVICE_TRACER), and code below it (search providers, SQL) opens its spans
 * with whatever tracer the context carries: none when the request is not traced.
 *
 * What goes into attributes: span names and attributes carry our own identifiers (provider
 * names, SQL text that we wrote, with its parameters left out, HTTP routes) and never a user's
 * search text or a token. The GraphQL document Hive's gateway plugin records is dropped before
 * export (DROPPED_ATTRIBUTES); every attribute value is cut at ATTRIBUTE_VALUE_LIMIT characters.
 */
import type { IncomingHttpHeaders } from "node:http";
// Only the API is loaded with this module (withSpan and the context lookups need it, and it is
// small). The SDK, the exporter and the context manager are imported by startServiceTracing when
// an endpoint is configured: loading them cost every server start about 0.3 s with tracing off.
import { context, createContextKey, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import type { BasicTracerProvider, ReadableSpan, Sampler, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "./tracing-config.js";

/** Longest attribute value exported (the GraphQL document, SQL text): bounded, so one span stays small. */
export const ATTRIBUTE_VALUE_LIMIT = 2_048;
/**
 * How long one export, and the flush at shutdown, may wait for the collector: well inside the
 * shutdown's cleanup margin (lib/shutdown.ts), so an unreachable collector never holds a stop.
 */
const EXPORT_TIMEOUT_MS = 3_000;
const TRACER_NAME = "context-search";
/**
 * Never exported: Hive's plugin records each operation's GraphQL document, where a client may have
 * written a search's text inline instead of in a variable. The operation's name, type and hash
 * (graphql.operation.hash) stay, which is enough to find it.
 */
const DROPPED_ATTRIBUTES = ["graphql.document"];

/** The active context's tracer: set by a traced server for the work of one request. */
const SERVICE_TRACER = createContextKey("context-search.service-tracer");

export interface ServiceTracing {
  tracer: Tracer;
  provider: BasicTracerProvider;
  serviceName: string;
  /** Exports every span still buffered, then stops the exporter. */
  shutdown(): Promise<void>;
}

let globalsInstalled = false;

/**
 * Registered once per process, and only when some server traces: the AsyncLocalStorage context
 * manager (so a span opened in an awaited call finds its parent) and the W3C traceparent
 * propagator (Hive's plugin injects and extracts through the global propagation API).
 */
async function installGlobals(): Promise<void> {
  if (globalsInstalled) return;
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] = await Promise.all([import("@opentelemetry/context-async-hooks"), import("@opentelemetry/core")]);
  // Checked again after the imports: two servers starting together both awaited them.
  if (globalsInstalled) return;
  globalsInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

type TraceSdk = typeof import("@opentelemetry/sdk-trace-base");

function samplerFor(config: TracingConfig, sdk: TraceSdk): Sampler {
  switch (config.sampler) {
    case "always_on":
      return new sdk.AlwaysOnSampler();
    case "always_off":
      return new sdk.AlwaysOffSampler();
    case "traceidratio":
      return new sdk.TraceIdRatioBasedSampler(config.ratio);
    case "parentbased_always_off":
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(config.ratio) });
    case "parentbased_always_on":
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

/**
 * A tracer provider for one server (`component`: "gateway" or a subgraph's name); null when
 * tracing is off, in which case nothing of the SDK is loaded.
 */
export async function startServiceTracing(config: TracingConfig | null | undefined, component: string): Promise<ServiceTracing | null> {
  if (!config?.endpoint) return null;
  const [sdk, { OTLPTraceExporter }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
    installGlobals(),
  ]);
  const serviceName = `${config.serviceName}-${component}`;
  const exporter = new OTLPTraceExporter({ url: config.endpoint, timeoutMillis: EXPORT_TIMEOUT_MS });
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    sampler: samplerFor(config, sdk),
    spanLimits: { attributeValueLengthLimit: ATTRIBUTE_VALUE_LIMIT },
    spanProcessors: [new sdk.BatchSpanProcessor(withoutAttributes(exporter, DROPPED_ATTRIBUTES), { exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
  });
  let stopped: Promise<void> | null = null;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    provider,
    serviceName,
    shutdown() {
      stopped ??= provider.shutdown().catch(() => {
        // An unreachable collector loses the last spans; it must not fail the shutdown.
      });
      return stopped;
    },
  };
}

/**
 * An exporter that leaves out the named attributes: each span is exported as a view of itself
 * (its prototype is the span) with its own filtered attribute object; spans without them pass as
 * they are.
 */
function withoutAttributes(exporter: SpanExporter, names: string[]): SpanExporter {
  const strip = (span: ReadableSpan): ReadableSpan => {
    if (!names.some((name) => name in span.attributes)) return span;
    const attributes = { ...span.attributes };
    for (const name of names) delete attributes[name];
    return Object.create(span, { attributes: { value: attributes } }) as ReadableSpan;
  };
  return {
    export: (spans, done) => exporter.export(spans.map(strip), done),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * Runs one incoming HTTP request of a traced server: continues the caller's trace when the
 * request carries a W3C `traceparent` (the gateway's subgraph fetch does), opens a SERVER span,
 * and makes the server's tracer the one code below opens its spans with.
 */
export async function traceIncomingRequest<T>(tracing: ServiceTracing | null, headers: IncomingHttpHeaders, name: string, attributes: Attributes, work: (span: Span | null) => Promise<T>): Promise<T> {
  if (!tracing) return work(null);
  // From the root, not the active context: only what the caller sent is a parent.
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracing.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const active = trace.setSpan(parent, span).setValue(SERVICE_TRACER, tracing.tracer);
  try {
    return await context.with(active, () => work(span));
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The tracer of the request being served, if it is traced. */
export function activeTracer(): Tracer | undefined {
  return context.active().getValue(SERVICE_TRACER) as Tracer | undefined;
}

/**
 * Runs `work` in a child span of the active one when the current request is traced, otherwise
 * as it is (`span` is then null). A thrown error marks the span as failed and is rethrown.
 */
export function withSpan<T>(name: string, attributes: Attributes, work: (span: Span | null) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  // Not an async function: untraced, the work's own promise is returned, with no extra tick.
  const tracer = activeTracer();
  if (!tracer) return work(null);
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A span for something that already happened (a SQL statement Prisma reports after running it),
 * as a child of the active span; nothing when the request is not traced.
 */
export function recordFinishedSpan(name: string, attributes: Attributes, startTime: Date, durationMs: number, kind: SpanKind = SpanKind.CLIENT): void {
  const tracer = activeTracer();
  if (!tracer) return;
  const span = tracer.startSpan(name, { kind, attributes, startTime }, context.active());
  span.end(new Date(startTime.getTime() + Math.max(0, durationMs)));
}

/** Runs one SQL statement of ours in a CLIENT span (when traced): its text is recorded, its parameters never. */
export function withStatementSpan<T>(sql: string, work: () => Promise<T>): Promise<T> {
  if (!activeTracer()) return work();
  return withSpan(sqlSpanName(sql), { "db.system.name": "postgresql", "db.query.text": sql }, work, SpanKind.CLIENT);
}

/** "SELECT", "INSERT", … : the statement's first word, found by a plain scan (no regex over the text). */
export function sqlSpanName(sql: string): string {
  let start = 0;
  while (start < sql.length && sql.charCodeAt(start) <= 32) start++;
  let end = start;
  while (end < sql.length && end - start < 16 && isAsciiLetter(sql.charCodeAt(end))) end++;
  return end > start ? sql.slice(start, end).toUpperCase() : "SQL";
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

export function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 200) });
  if (error instanceof Error) span.recordException({ name: error.name, message: message.slice(0, 200) });
}

export { SpanKind, SpanStatusCode };
