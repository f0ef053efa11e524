/**
 * The gateway's Prometheus metrics, collected by Hive's maintained plugin
 * (@graphql-mesh/plugin-prometheus) on a registry of this gateway's own (tests start many
 * gateways in one process; the global registry would mix them, and the plugin clears its
 * registry when the runtime is disposed). Our server answers `GET /metrics` itself
 * (lib/observability/metrics-endpoint.ts) rather than the plugin, so the scrape passes the same
 * access rule as the subgraphs'.
 *
 * Only metrics with bounded labels are on: operation names pass through BoundedLabelValues, error
 * labels are the phase and the error code (never the path, which grows with list indices), and the
 * plugin's HTTP duration metric stays off because it labels by the full request URL.
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import type { Logger } from "@graphql-hive/logger";
import useMeshPrometheus, { createCounter, createHistogram } from "@graphql-mesh/plugin-prometheus";
import { Gauge, Registry } from "prom-client";
import { BoundedLabelValues } from "../lib/observability/metrics-endpoint.js";
import { MAX_UPLOADS_IN_FLIGHT } from "./upload-admission.js";

/** From 5 ms to 10 s, as in the subgraphs (lib/observability/subgraph-metrics.ts), so the two compare bucket by bucket. */
const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface GatewayMetrics {
  registry: Registry;
  /** The runtime plugin; `log` is the runtime's own logger (the plugin's factory context has it). */
  plugin(log: Logger): GatewayPlugin;
  /** Reports the uploads holding a place in this process (upload-admission.ts), read at each scrape. */
  trackUploads(inFlight: () => number): void;
}

export function gatewayMetrics(): GatewayMetrics {
  const registry = new Registry();
  const operationNames = new BoundedLabelValues();
  const subgraphOperationNames = new BoundedLabelValues();
  const errorCodes = new BoundedLabelValues(50, 64, "NONE");
  const operationLabels = (params: { operationName?: string; operationType?: string }) => ({
    operationName: operationNames.label(params.operationName),
    operationType: params.operationType ?? "unknown",
  });
  const subgraphLabels = ({ subgraphName, executionRequest }: { subgraphName: string; executionRequest: { operationName?: string; operationType?: string } }) => ({
    subgraphName,
    operationName: subgraphOperationNames.label(executionRequest.operationName),
    operationType: executionRequest.operationType ?? "query",
  });

  return {
    registry,
    trackUploads(inFlight) {
      new Gauge({
        name: "gateway_uploads_in_flight",
        help: `Uploads admitted and not yet answered in this gateway process (the process refuses more than ${MAX_UPLOADS_IN_FLIGHT} with 503)`,
        registers: [registry],
        collect() {
          this.set(inFlight());
        },
      });
    },
    plugin: (log) =>
      useMeshPrometheus({
        log,
        registry,
        endpoint: false,
        skipIntrospection: true,
        metrics: {
          graphql_envelop_request: createCounter({
            registry,
            counter: { name: "graphql_envelop_request", help: "GraphQL operations the gateway executed, by operation name and type", labelNames: ["operationName", "operationType"] },
            fillLabelsFn: operationLabels,
          }),
          graphql_envelop_request_duration: createHistogram({
            registry,
            histogram: {
              name: "graphql_envelop_request_duration",
              help: "Time the gateway spent executing an operation (planning and every subgraph call), by operation name and type, in seconds",
              labelNames: ["operationName", "operationType"],
              buckets: LATENCY_BUCKETS_SECONDS,
            },
            fillLabelsFn: operationLabels,
          }),
          graphql_envelop_error_result: createCounter({
            registry,
            counter: {
              name: "graphql_envelop_error_result",
              help: "Errors in gateway responses, by operation, phase (parse, validate, context, execute) and error code",
              labelNames: ["operationName", "operationType", "phase", "code"],
            },
            fillLabelsFn: (params) => ({
              ...operationLabels(params),
              phase: params.errorPhase ?? "unknown",
              code: errorCodes.label(typeof params.error?.extensions?.code === "string" ? params.error.extensions.code : null),
            }),
          }),
          graphql_gateway_subgraph_execute_duration: createHistogram({
            registry,
            histogram: {
              name: "graphql_gateway_subgraph_execute_duration",
              help: "Time one subgraph call took, by subgraph and the operation the planner sent it, in seconds",
              labelNames: ["subgraphName", "operationName", "operationType"],
              buckets: LATENCY_BUCKETS_SECONDS,
            },
            fillLabelsFn: subgraphLabels,
          }),
          graphql_gateway_subgraph_execute_errors: createCounter({
            registry,
            counter: { name: "graphql_gateway_subgraph_execute_errors", help: "Errors in subgraph responses, by subgraph and operation", labelNames: ["subgraphName", "operationName", "operationType"] },
            fillLabelsFn: subgraphLabels,
          }),
          // Labelled by subgraph URL, method and status: as many series as subgraphs × statuses.
          graphql_gateway_fetch_duration: LATENCY_BUCKETS_SECONDS as [number, ...number[]],
          graphql_envelop_request_time_summary: false,
          graphql_envelop_deprecated_field: false,
          graphql_envelop_phase_parse: false,
          graphql_envelop_phase_validate: false,
          graphql_envelop_phase_context: false,
          graphql_envelop_phase_execute: false,
          graphql_envelop_phase_subscribe: false,
          graphql_envelop_execute_resolver: false,
          graphql_envelop_schema_change: false,
          graphql_yoga_http_duration: false,
        },
      }),
  };
}
