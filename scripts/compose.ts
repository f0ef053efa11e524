/**
 * `npm run compose [-- --config supergraph.yaml --output supergraph.graphql]`: composes the
 * supergraph from the Rover-style config and writes it. Composition errors print the
 * composer's own messages and exit 1. (The Guild's composer reports errors only: it has no
 * hints, unlike Rover, so there are none to print.)
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { composeFromConfig } from "../lib/composition/compose.js";
import { readSupergraphConfig } from "../lib/composition/supergraph-config.js";
import { loadConfig } from "../lib/config.js";
import { runMain } from "../lib/shutdown.js";

runMain(async () => {
  const { values } = parseArgs({ options: { config: { type: "string" }, output: { type: "string" } } });
  const config = loadConfig();
  const configPath = values.config ? path.resolve(values.config) : config.gateway.supergraphConfigPath;
  const outputPath = values.output ? path.resolve(values.output) : config.gateway.supergraphPath;
  const supergraphConfig = readSupergraphConfig(configPath, process.env);
  const sdl = await composeFromConfig(supergraphConfig);
  fs.writeFileSync(outputPath, sdl.endsWith("\n") ? sdl : `${sdl}\n`);
  const names = supergraphConfig.subgraphs.map((subgraph) => `${subgraph.name} (${subgraph.routingUrl})`).join(", ");
  process.stdout.write(`Composed ${supergraphConfig.subgraphs.length} subgraph(s): ${names}\nWrote ${path.relative(process.cwd(), outputPath)}\n`);
});
