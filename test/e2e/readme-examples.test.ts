/**
 * The README's examples, run as a newcomer would run them (issue 38): every ```sh, ```bash,
 * ```shell and ```graphql block of README.md either runs here against a fresh stack seeded with
 * the demo organization, as `npm start` seeds it, or is marked `<!-- doc-test: skip — reason -->`
 * right above it. So an example cannot drift from the product: a new block runs unless its
 * author says why it cannot (test/support/markdown-blocks.ts has the conventions).
 *
 * - GraphQL blocks go through the gateway with a token like the dev token `npm start` prints
 *   (GraphiQL sends it), one request per operation of the block; a ```json block right after one
 *   holds its variables, as GraphiQL's Variables pane does. Each must answer HTTP 200 with data
 *   and no `errors`.
 * - Shell blocks run in order in one bash session, as a reader types them into one terminal
 *   (exported variables carry from block to block), in a scratch folder inside the repository (so
 *   `npm run` finds it), with `set -eo pipefail`, JWT_SECRET set to the stack's (so
 *   `npm run token` signs tokens it accepts) and `http://127.0.0.1:4000` pointed at the stack's
 *   gateway. curl runs with --fail-with-body, so an HTTP error fails the block. Each must exit 0
 *   and print something, and JSON it prints must have no `errors`.
 * - `<!-- doc-test: expect "text" -->` above a block: its output must contain the text.
 * Every failure names the README line of its block.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import { Kind, parse, type OperationDefinitionNode } from "graphql";
import { DEMO_USERS } from "../../lib/demo-data/organization.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { DEMO_ORGANIZATION_SEEDED, demoDocumentsIndexed, demoTokenFor } from "../support/demo-organization.js";
import { readFencedBlocks, RUNNABLE_LANGUAGES, SHELL_LANGUAGES, type FencedBlock } from "../support/markdown-blocks.js";
import { startTestStack, type TestStack } from "../support/stack.js";

const README = "README.md";
/** The address the README's examples use: `npm start`'s default gateway port. */
const README_GATEWAY = /\b(?:127\.0\.0\.1|localhost):4000\b/g;

const { blocks, problems } = readFencedBlocks(fs.readFileSync(README, "utf8"), README);
const runnable = blocks.filter((block) => RUNNABLE_LANGUAGES.has(block.language));

let test: TestStack;
let gateway: string;
let gatewayHost: string;
let token: string;
let scratch: string;

beforeAll(async () => {
  test = await startTestStack({}, { database: { startingPoint: DEMO_ORGANIZATION_SEEDED } });
  // The README promises the demo documents are found once READY; the examples run after that.
  await demoDocumentsIndexed(test, "readme examples");
  gateway = test.stack.gateway.url;
  gatewayHost = new URL(gateway).host;
  token = await demoTokenFor(DEMO_USERS[0].id);
  // Inside the repository, so `npm run …` finds package.json; .data is ignored by git.
  fs.mkdirSync(".data", { recursive: true });
  scratch = fs.mkdtempSync(path.resolve(".data", "readme-examples-"));
}, 300_000);

afterAll(async () => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  await test?.stop();
  await closeWorkerPools();
});

it("README.md follows the doc-test conventions: every block names its language, every skip gives its reason", () => {
  expect(problems).toEqual([]);
  // The first screen's examples are the point of this file: it runs some, whatever else changes.
  expect(runnable.filter((block) => !skipReason(block)).map((block) => block.language)).toEqual(expect.arrayContaining(["graphql", "sh"]));
});

for (const block of runnable) {
  const title = `README.md:${block.line} ${block.language}`;
  const reason = skipReason(block);
  if (reason) {
    it.skip(`${title} (skipped: ${reason})`, () => undefined);
    continue;
  }
  it(`${title} runs as written`, async () => {
    const output = SHELL_LANGUAGES.has(block.language) ? await runShell(block) : await runGraphQL(block);
    for (const directive of block.directives) {
      if (directive.kind === "expect" && !output.includes(directive.value)) fail(block, `its output does not contain ${JSON.stringify(directive.value)}:\n${output.slice(0, 2_000)}`);
    }
  }, 180_000);
}

function skipReason(block: FencedBlock): string | null {
  return block.directives.find((directive) => directive.kind === "skip")?.value ?? null;
}

function fail(block: FencedBlock, message: string): never {
  throw new Error(`README.md:${block.line} (${block.language} block): ${message}`);
}

async function runGraphQL(block: FencedBlock): Promise<string> {
  let operations: OperationDefinitionNode[];
  try {
    operations = parse(block.body).definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  } catch (error) {
    fail(block, `does not parse: ${(error as Error).message}`);
  }
  let variables: Record<string, unknown> = {};
  if (block.next) {
    try {
      variables = JSON.parse(block.next.body) as Record<string, unknown>;
    } catch (error) {
      fail(block, `its variables (the json block at README.md:${block.next.line}) are not JSON: ${(error as Error).message}`);
    }
  }
  const outputs: string[] = [];
  for (const operation of operations) {
    const name = operation.name?.value;
    const response = await fetch(gateway, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: block.body, ...(name ? { operationName: name } : {}), variables }),
    });
    const text = await response.text();
    const label = name ? `operation ${name}` : "its operation";
    if (response.status !== 200) fail(block, `${label} answered HTTP ${response.status}: ${text.slice(0, 1_000)}`);
    const body = JSON.parse(text) as { data?: Record<string, unknown> | null; errors?: unknown[] };
    if (body.errors) fail(block, `${label} answered with errors: ${JSON.stringify(body.errors).slice(0, 1_000)}`);
    if (!body.data || Object.values(body.data).every((value) => value === null)) fail(block, `${label} answered no data: ${text.slice(0, 1_000)}`);
    outputs.push(text);
  }
  return outputs.join("\n");
}

async function runShell(block: FencedBlock): Promise<string> {
  const state = path.join(scratch, ".state.sh");
  const script = [
    "set -eo pipefail",
    `if [ -f ${JSON.stringify(state)} ]; then source ${JSON.stringify(state)}; fi`,
    // HTTP errors fail the block; -s in the README still keeps the progress meter off.
    "curl() { command curl --fail-with-body --show-error \"$@\"; }",
    block.body.replace(README_GATEWAY, gatewayHost),
    // What the block exported is there for the next one, as in one terminal.
    `export -p > ${JSON.stringify(state)}`,
  ].join("\n");
  const { NODE_OPTIONS: _jestFlags, ...environment } = process.env;
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd: scratch, env: { ...environment, JWT_SECRET: test.config.auth.jwtSecret! }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (exitCode: number | null) => resolve({ code: exitCode, stdout: out, stderr: err }));
  });
  if (code !== 0) fail(block, `exited with ${code}\nstdout: ${stdout.slice(0, 1_000)}\nstderr: ${stderr.slice(0, 2_000)}`);
  if (stdout.trim() === "") fail(block, `printed nothing (stderr: ${stderr.slice(0, 1_000)})`);
  for (const line of stdout.split("\n")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (parsed && typeof parsed === "object" && "errors" in parsed) fail(block, `printed GraphQL errors: ${line.slice(0, 1_000)}`);
  }
  return stdout;
}
