/**
 * Tracing costs nothing when it is off: a fresh process that loads a subgraph server and starts
 * its tracing without an endpoint loads the OpenTelemetry API and none of the SDK. Each probe is
 * a Node process of its own that loads the server's modules through tsx (seconds of CPU, tens of
 * seconds on a busy machine), so this lives with the integration tests, not in test:fast; its
 * time limits only stop a process that hangs.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "@jest/globals";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The @opentelemetry packages a fresh process loads to run `script` (an ES module that may
 * import the project's files by URL): this test's own process has loaded the SDK long ago.
 */
async function openTelemetryPackagesLoadedBy(script: string): Promise<string[]> {
  const { NODE_OPTIONS: _jestOptions, ...env } = process.env;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "test/support/loaded-packages.mjs", "@opentelemetry/", `data:text/javascript,${encodeURIComponent(script)}`], { cwd: ROOT, env, timeout: 150_000 });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as string[];
}

const projectFile = (path: string) => JSON.stringify(new URL(`../../${path}`, import.meta.url).href);

describe("tracing when off", () => {
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
  }, 180_000);
});
