/**
 * Tracing's configuration: the standard OpenTelemetry variables, read through loadConfig. Off
 * unless an OTLP endpoint is set; the base endpoint gets /v1/traces appended, the traces one is
 * used as it is; wrong values are ConfigErrors naming the variable. What a process loads with
 * tracing off is test/integration/tracing-loading.test.ts (it starts processes of its own).
 */
import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { sqlSpanName, startServiceTracing, withSpan } from "../../lib/observability/tracing.js";

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe("tracing configuration", () => {
  it("is off by default, and nothing is set up for it", async () => {
    const { tracing } = loadConfig({});
    expect(tracing).toEqual({ endpoint: null, serviceName: "context-search", sampler: "parentbased_always_on", ratio: 1 });
    expect(await startServiceTracing(tracing, "search")).toBeNull();
    // Untraced, withSpan hands the work no span and returns its own result.
    let seen: unknown = "not called";
    expect(await withSpan("x", {}, async (span) => ((seen = span), 42))).toBe(42);
    expect(seen).toBeNull();
  });

  it("appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT and takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is", () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).tracing.endpoint).toBe("http://collector:4318/v1/traces");
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing.endpoint).toBe("http://collector:4318/v1/traces");
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://tempo.example/otlp/v1/traces" }).tracing.endpoint).toBe("https://tempo.example/otlp/v1/traces");
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_SDK_DISABLED: "true" }).tracing.endpoint).toBeNull();
  });

  it("reads the service name and the sampler", () => {
    const { tracing } = loadConfig({ OTEL_SERVICE_NAME: "cs-staging", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" });
    expect(tracing).toMatchObject({ serviceName: "cs-staging", sampler: "parentbased_traceidratio", ratio: 0.25 });
  });

  it("refuses wrong values with an error naming the variable", () => {
    expect(configError({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }).message).toContain("OTEL_EXPORTER_OTLP_ENDPOINT");
    expect(configError({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "grpc://collector:4317" }).message).toContain("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    expect(configError({ OTEL_TRACES_SAMPLER: "jaeger_remote" }).message).toContain("OTEL_TRACES_SAMPLER");
    expect(configError({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" }).message).toContain("OTEL_TRACES_SAMPLER_ARG");
    expect(configError({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "half" }).message).toContain("OTEL_TRACES_SAMPLER_ARG");
    expect(configError({ OTEL_SERVICE_NAME: "has spaces in it" }).message).toContain("OTEL_SERVICE_NAME");
  });

  it("names SQL spans by the statement's first word", () => {
    expect(sqlSpanName("\n      SELECT id FROM t")).toBe("SELECT");
    expect(sqlSpanName("insert into t values (1)")).toBe("INSERT");
    expect(sqlSpanName('-- Implicit "BEGIN" query')).toBe("SQL");
    expect(sqlSpanName("")).toBe("SQL");
    expect(sqlSpanName("a".repeat(1_000_000))).toHaveLength(16);
  });
});
