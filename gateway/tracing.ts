/**
 * Gateway traces: Hive's OpenTelemetry plugin opens the HTTP request, GraphQL operation (parse,
 * validate, execute), subgraph-execution and upstream-fetch spans, continues a client's W3C
 * `traceparent` and injects one into every subgraph fetch, so the subgraphs' spans join the
 * same trace. It uses the gateway's own tracer provider (lib/observability/tracing.ts); with no
 * OTLP endpoint configured there is no plugin at all, and the plugin is not even loaded: its
 * import (OpenTelemetry's auto-instrumentations among its dependencies) adds 0.25-0.3 s to a
 * gateway start on this 2-core machine, after the runtime's own imports, which every start and
 * every e2e test's stack would pay with tracing off.
 */
import type { GatewayConfigContext, GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { trace } from "@opentelemetry/api";
import { startServiceTracing, type ServiceTracing } from "../lib/observability/tracing.js";
import type { TracingConfig } from "../lib/observability/tracing-config.js";

export interface GatewayTracing {
  service: ServiceTracing;
  plugin(context: Partial<GatewayConfigContext>): GatewayPlugin;
  /** Flushes the spans still buffered; called once the runtime is disposed. */
  shutdown(): Promise<void>;
}

export async function gatewayTracing(config: TracingConfig | null | undefined): Promise<GatewayTracing | null> {
  const service = await startServiceTracing(config, "gateway");
  if (!service) return null;
  const { useOpenTelemetry } = await import("@graphql-hive/plugin-opentelemetry");
  // The plugin (1.5.3) reads its `traces.tracer` option before it has resolved it, so it always
  // asks the global API for its tracer: the gateway's provider is made the global one. The
  // subgraphs never use the global provider (their tracer travels in the request's context),
  // so in the one-process stack they still report as services of their own.
  trace.setGlobalTracerProvider(service.provider);
  return {
    service,
    plugin: (context) =>
      useOpenTelemetry({
        ...context,
        traces: { tracer: service.tracer },
        useContextManager: true,
        inheritContext: true,
        propagateContext: true,
        // The plugin would flush the global provider, which we never set: ours is flushed by shutdown().
        flushOnDispose: false,
      }) as GatewayPlugin,
    async shutdown() {
      await service.shutdown();
      // Unregistered, so a gateway started later in this process (tests) can register its own.
      trace.disable();
    },
  };
}
