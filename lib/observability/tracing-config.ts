/**
 * What the configuration says about tracing. Kept apart from tracing.ts so that reading the
 * configuration never loads the OpenTelemetry SDK: with no endpoint, nothing of it is loaded
 * into use at all.
 */

/** OTEL_TRACES_SAMPLER values we honour (the specification's built-in samplers). */
export const TRACE_SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export interface TracingConfig {
  /** Full OTLP/HTTP traces URL (…/v1/traces); null means tracing is off: no provider, no span, no export. */
  endpoint: string | null;
  /**
   * OTEL_SERVICE_NAME (default "context-search"): each server reports as `<name>-<component>`
   * (`context-search-gateway`, `context-search-search`, …), so the one-process `npm start`
   * still shows the gateway and every subgraph as services of their own.
   */
  serviceName: string;
  sampler: TraceSampler;
  /** OTEL_TRACES_SAMPLER_ARG for the traceidratio samplers (0 to 1). */
  ratio: number;
}

export const TRACING_OFF: TracingConfig = { endpoint: null, serviceName: "context-search", sampler: "parentbased_always_on", ratio: 1 };
