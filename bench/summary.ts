/**
 * SUMMARY.md and the plots, rebuilt from every bench/results/<scenario>.json present: where we
 * stand against the targets first, then each scenario's numbers with the conditions
 * they were measured under.
 */
import fs from "node:fs";
import path from "node:path";
import { renderMarkdownTable } from "../lib/evaluation/markdown-table.js";
import { SCENARIO_NAMES, type ScenarioName } from "./options.js";
import { readScenarioFile, type EntryBase, type ScenarioFile, type TargetResult } from "./report.js";
import type { Scenario } from "./scenario.js";

export function writeSummary(outDir: string, scenarios: Record<ScenarioName, Scenario<EntryBase>>): string[] {
  const written: string[] = [];
  const sections: string[] = [];
  const targets: TargetResult[] = [];
  const runs = new Map<string, string>();
  for (const name of SCENARIO_NAMES) {
    const file = readScenarioFile<EntryBase>(outDir, name);
    if (!file || file.entries.length === 0) continue;
    const scenario = scenarios[name];
    for (const entry of file.entries) runs.set(entry.run.runId, `${entry.run.startedAt}: \`${entry.run.command}\``);
    const plots = scenario.plots?.(file) ?? [];
    for (const plot of plots) {
      fs.writeFileSync(path.join(outDir, plot.file), plot.svg);
      written.push(plot.file);
    }
    targets.push(...(scenario.targets?.(file) ?? []));
    sections.push(
      [
        `## ${scenario.title} (\`${name}.json\`)`,
        "",
        ...(plots.length > 0 ? [plots.map((plot) => `![${plot.file}](${plot.file})`).join("\n"), ""] : []),
        scenario.renderSection(file),
      ].join("\n"),
    );
  }
  const anyFile = SCENARIO_NAMES.map((name) => readScenarioFile(outDir, name)).find((file): file is ScenarioFile => file !== null);
  const machine = anyFile?.entries[0]?.run.machine;
  const lines = [
    "# Benchmark results",
    "",
    "Written by `npm run bench` (bench/run.ts); every number below comes from the JSON files beside this one. " +
      "Absolute times depend on the machine and on whatever else it was doing (see each entry's load average); " +
      "the ratios compare configurations measured in the same process and run, which is what these benchmarks are for.",
    "",
    machine ? `Machine: ${machine.cpus} × ${machine.cpuModel}, ${Math.round(machine.memoryMb / 1024)} GB, Node ${machine.node}, ${machine.platform}.` : "",
    "",
    "Runs included:",
    ...[...runs.entries()].map(([id, description]) => `- ${id} — ${description}`),
    "",
    "## Targets",
    "",
    targets.length > 0
      ? renderMarkdownTable(
          ["target", "status", "measured", "margin", "where the time goes"],
          targets.map((target) => [target.target, statusLabel(target.status), target.measured, target.margin, target.evidence ?? ""]),
        )
      : "No scenario with a target has run yet.",
    "",
    ...sections.flatMap((section) => [section, ""]),
  ];
  fs.writeFileSync(path.join(outDir, "SUMMARY.md"), `${lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`);
  written.push("SUMMARY.md");
  return written;
}

function statusLabel(status: TargetResult["status"]): string {
  return status === "met" ? "✅ met" : status === "missed" ? "❌ missed" : "– not measured";
}
