// The README's start figures: `node bench/start-figures.mjs [--runs 3] [--command "node --import tsx scripts/start.ts"]`.
// Starts `npm start`'s command (package.json's scripts.start unless --command says otherwise) on a
// fresh embedded database (first start: migrations and demo seed), then again on the same data
// (restart), each time on ports chosen by the system, and prints per run:
//   up       seconds from spawning the process to the banner (what the user waits)
//   banner   the banner's own "up in N s" (from the process's start)
//   first    seconds for the first request after the banner (the banner's curl example)
//   docs     seconds after the banner until a search finds a demo document (first start only)
//   cpu      CPU seconds the process's main thread had used at the banner: near what "up" would
//            take on an idle machine (worker threads run beside it on the other core), when the
//            machine is busy with other work and wall-clock figures say more about the others
//   threads  CPU seconds of the whole process (all threads) at the banner
//   load     the 1-minute load average when the run began (other work on the machine)
// Plain JavaScript, so that it measures the tsx-based start and the compiled one alike.
// --first-command runs the first start with another command (e.g. the compiled one, to measure
// the restart of a command whose own first start fails).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" }, command: { type: "string" }, "first-command": { type: "string" }, conversations: { type: "string", default: "300" } } });
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const command = values.command ?? JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).scripts.start;

function start(dataDir, command) {
  const [program, ...args] = command.split(/\s+/);
  const began = performance.now();
  const load = os.loadavg()[0];
  const child = spawn(program === "node" ? process.execPath : program, args, {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: "", GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", PGLITE_DATA_DIR: dataDir, DATABASE_URL: "", DEMO_CONVERSATIONS: values.conversations },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString();
      const banner = /is up in ([\d.]+) s/.exec(output);
      const body = /-d '([^']+)'/.exec(output);
      if (banner && body) {
        child.stdout.off("data", onData);
        child.stderr.off("data", onData);
        resolve({ child, cpu: cpuSeconds(`/proc/${child.pid}/task/${child.pid}/stat`), threads: cpuSeconds(`/proc/${child.pid}/stat`), up: (performance.now() - began) / 1000, banner: Number(banner[1]), load, url: /GraphQL endpoint \+ GraphiQL: (\S+)/.exec(output)[1], token: /Dev token[^\n]*\n\s+(\S+)/.exec(output)[1], body: body[1] });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${command} exited with ${code}:\n${output}`)));
  });
}

/** User and system time (Linux: /proc/<pid>/stat, or one thread's /proc/<pid>/task/<tid>/stat, in clock ticks of 1/100 s). */
function cpuSeconds(statPath) {
  const fields = fs.readFileSync(statPath, "utf8").replace(/^.*\) /, "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function post(started, body) {
  const response = await fetch(started.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${started.token}` }, body });
  return response.json();
}

async function documentsSearchable(started, since) {
  for (let attempt = 0; ; attempt++) {
    const result = await post(started, JSON.stringify({ query: `query ($limit: Int!) { search(input: { query: "deadlock detected in the order service", limit: $limit }) { hits { item { ... on DocumentChunk { document { fileName } } } } } }`, variables: { limit: 20 + (attempt % 30) } }));
    if ((result.data?.search?.hits ?? []).some((hit) => hit.item?.document?.fileName === "postgres-deadlocks-runbook.md")) return (performance.now() - since) / 1000;
    if (performance.now() - since > 600_000) return Infinity;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function stop(child) {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

console.log(`command: ${command}   cores: ${os.cpus().length}   node ${process.version}`);
console.log("run  start    up(s)  banner(s)  cpu(s)  threads(s)  first(s)  docs(s)  load");
for (let run = 1; run <= Number(values.runs); run++) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "start-figures-"));
  try {
    for (const kind of ["first", "restart"]) {
      const started = await start(dataDir, kind === "first" ? (values["first-command"] ?? command) : command);
      const afterBanner = performance.now();
      const first = await post(started, started.body);
      if (first.errors) throw new Error(`the first request failed: ${JSON.stringify(first.errors)}`);
      const firstSeconds = (performance.now() - afterBanner) / 1000;
      const docs = kind === "first" ? await documentsSearchable(started, afterBanner) : null;
      console.log(`${String(run).padEnd(4)} ${kind.padEnd(8)} ${started.up.toFixed(1).padStart(5)}  ${started.banner.toFixed(1).padStart(9)}  ${started.cpu.toFixed(1).padStart(6)}  ${started.threads.toFixed(1).padStart(10)}  ${firstSeconds.toFixed(2).padStart(8)}  ${docs === null ? "-".padStart(7) : docs.toFixed(1).padStart(7)}  ${started.load.toFixed(1)}`);
      await stop(started.child);
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
