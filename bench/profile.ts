/**
 * CPU profiles of the process under test (node:inspector's Profiler, the same data Chrome
 * DevTools shows), saved as .cpuprofile and summarized as where the samples landed: the
 * functions with the most self time, and self time per package, so a Markdown summary can say
 * where the time of a missed target goes without anyone opening DevTools.
 */
import fs from "node:fs";
import path from "node:path";
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { round } from "./stats.js";

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface SelfTime {
  name: string;
  selfMs: number;
  selfPercent: number;
}

export interface ProfileSummary {
  /** What was profiled. */
  label: string;
  /** The .cpuprofile file, relative to the results folder. */
  file: string;
  totalMs: number;
  /** Share of samples when the main thread was busy (not idle). */
  busyPercent: number;
  topFunctions: SelfTime[];
  byPackage: SelfTime[];
}

/** Samples the main thread every 500 µs while `work` runs. */
export async function profileWhile<T>(label: string, outFile: string, work: () => Promise<T>): Promise<{ result: T; profile: ProfileSummary }> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 500 });
    await session.post("Profiler.start");
    let result: T;
    let profile: CpuProfile;
    try {
      result = await work();
    } finally {
      // Stopped even when the work fails, so a failed run never leaves the profiler sampling.
      ({ profile } = (await session.post("Profiler.stop")) as { profile: CpuProfile });
    }
    fs.mkdirSync(path.dirname(outFile), { recursive: true });
    fs.writeFileSync(outFile, JSON.stringify(profile));
    return { result, profile: summarizeProfile(label, path.basename(outFile), profile) };
  } finally {
    session.disconnect();
  }
}

export function summarizeProfile(label: string, file: string, profile: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Self time per node: the time deltas of the samples that landed in it.
  const selfMicros = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // Each delta is the time before its sample; the next sample's delta is this sample's duration.
    const duration = deltas[i + 1] ?? deltas[i] ?? 0;
    selfMicros.set(samples[i]!, (selfMicros.get(samples[i]!) ?? 0) + Math.max(0, duration));
  }
  const totalMicros = [...selfMicros.values()].reduce((sum, value) => sum + value, 0) || 1;
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let idleMicros = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === "(idle)") idleMicros += micros;
    const name = describeFrame(frame);
    functions.set(name, (functions.get(name) ?? 0) + micros);
    const owner = ownerOf(frame);
    packages.set(owner, (packages.get(owner) ?? 0) + micros);
  }
  const rank = (entries: Map<string, number>): SelfTime[] =>
    [...entries.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => ({ name, selfMs: round(micros / 1000, 1), selfPercent: round((100 * micros) / totalMicros, 1) }));
  return {
    label,
    file,
    totalMs: round(totalMicros / 1000, 1),
    busyPercent: round(100 - (100 * idleMicros) / totalMicros, 1),
    topFunctions: rank(functions),
    byPackage: rank(packages),
  };
}

function describeFrame(frame: CallFrame): string {
  const name = frame.functionName || "(anonymous)";
  if (!frame.url) return name;
  return `${name} (${shortUrl(frame.url)}:${frame.lineNumber + 1})`;
}

function shortUrl(url: string): string {
  const file = url.startsWith("file://") ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf("node_modules/");
  if (modules >= 0) return file.slice(modules + "node_modules/".length);
  return file.startsWith(REPOSITORY_ROOT) ? path.relative(REPOSITORY_ROOT, file) : file;
}

/** The npm package, the project folder, Node's internals, or V8's pseudo-frames a sample landed in. */
function ownerOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  if (frame.url.startsWith("node:")) return "node internals";
  // PGlite's PostgreSQL and Prisma 7's query compiler are both WebAssembly; so is TF.js's backend.
  if (frame.url.startsWith("wasm://")) return "WebAssembly (PGlite / Prisma query compiler / TF.js)";
  const file = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url;
  const modules = file.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const parts = file.slice(modules + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (file.startsWith(REPOSITORY_ROOT)) return `project: ${path.relative(REPOSITORY_ROOT, file).split(path.sep).slice(0, 2).join("/")}`;
  return file;
}
