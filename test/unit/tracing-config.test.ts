/**
 * Tracing's configuration: the standard OpenTelemetry variables, read through loadConfig. Off
 * unless an OTLP endpoint is set; the base endpoint gets /v1/traces appended, the traces one is
 * used as it is; wrong values are ConfigErrors naming the variable.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { sqlSpanName, startServiceTracing, withSpan } from "../../lib/observability/tracing.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The @opentelemetry packages a fresh process loads to run `script` (an ES module that may
 * import the project's files by URL): this test's own process has loaded the SDK long ago.
 */
async function openTelemetryPackagesLoadedBy(script: string): Promise<string[]> {
  const { NODE_OPTIONS: _jestOptions, ...env } = process.env;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "test/support/loaded-packages.mjs", "@opentelemetry/", `data:text/javascript,${encodeURIComponent(script)}`], { cwd: ROOT, env, timeout: 30_000 });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as string[];
}

const projectFile = (path: string) => JSON.stringify(new URL(`../../${path}`, import.meta.url).href);

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

  it("loads none of the SDK when off: loading a subgraph server and its tracing costs only the API", async () => {
    const startWith = (endpoint: string | null) => `
      import { loadConfig } from ${projectFile("lib/config.ts")};
      import { startServiceTracing } from ${projectFile("lib/observability/tracing.ts")};
      import ${projectFile("lib/graphql/subgraph-server.ts")};
      const tracing = await startServiceTracing({ ...loadConfig({}).tracing, endpoint: ${JSON.stringify(endpoint)} }, "search");
      await tracing?.shutdown();`;
    const [off, on] = await Promise.all([openTelemetryPackagesLoadedBy(startWith(null)), openTelemetryPackagesLoadedBy(startWith("http://127.0.0.1:9/v1/traces"))]);
    expect(off).toEqual(["@opentelemetry/api"]);
    // The same probe sees the SDK once an endpoint is set, so the empty list above is not its blindness.
    expect(on).toEqual(expect.arrayContaining(["@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/context-async-hooks"]));
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
