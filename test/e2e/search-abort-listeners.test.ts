/**
 * Unified searches that ask every provider (conversations, documents, knowledge bases, web
 * through Serper and DataForSEO stand-ins, Slack), twelve at a time, must not make our code pile
 * abort listeners onto one AbortSignal (Node's MaxListenersExceededWarning at 11): that means a
 * signal shared by providers, attempts or requests keeps a listener for each of them.
 *
 * The gateway's HTTP transport (@graphql-tools/executor-http 3.4.1) links every subgraph request
 * to one long-lived dispose signal per subgraph, whose listeners go only when each request's
 * signal is garbage-collected; gateway/subgraph-transport.ts bounds that one signal. So no
 * warning is expected at all, from our code or the transport's.
 *
 * The searches run in a child process (test/support/all-providers-search.ts): Jest gives a test
 * a copy of `process`, and Node emits its own warnings on the real one, so a listener here would
 * never hear them (checked: 11 abort listeners on one signal warn on stderr while the sandbox's
 * process.on("warning") stays silent).
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "@jest/globals";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;

interface Scenario {
  warnings: { name: string; message: string; stack?: string }[];
  reports: ({ name: string; status: string }[] | unknown)[];
}

describe("searches over every provider", () => {
  it("add no pile of abort listeners to one signal (no MaxListenersExceededWarning)", async () => {
    const { stdout } = await run(path.join(ROOT, "node_modules/.bin/tsx"), ["test/support/all-providers-search.ts"], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: "", SEARCHES: "2", CONCURRENT: "12" },
      maxBuffer: 16 * 1024 * 1024,
    });
    const { warnings, reports } = JSON.parse(stdout.trim().split("\n").at(-1)!) as Scenario;
    expect(reports).toHaveLength(24);
    for (const providers of reports) {
      // Every search answered, and the fan-out really was wide: every provider ran and answered
      // (the script's provider timeouts are generous), the semantic ones skipped at alpha 1 only.
      expect(Array.isArray(providers)).toBe(true);
      expect((providers as unknown[]).length).toBeGreaterThanOrEqual(8);
      expect((providers as { name: string; status: string }[]).filter((provider) => provider.status !== "OK" && provider.status !== "SKIPPED")).toEqual([]);
    }
    const statuses = (reports as { name: string; status: string }[][]).flat();
    for (const name of ["web.serper", "web.dataforseo", "slack.messages", "linkedin.posts", "knowledge-bases", "conversations.keyword", "conversations.semantic"]) expect(statuses.some((provider) => provider.name === name && provider.status === "OK")).toBe(true);
    const piles = warnings.filter((warning) => warning.name === "MaxListenersExceededWarning");
    expect(piles.map((warning) => warning.stack)).toEqual([]);
  }, 300_000);
});
