/**
 * Reads a Rover-style supergraph.yaml:
 *
 *   federation_version: =2.9.0
 *   subgraphs:
 *     <name>:
 *       routing_url: http://…/graphql
 *       schema:
 *         file: ./path/to/schema.graphql      # or
 *         subgraph_url: http://…/graphql      # fetched with `{ _service { sdl } }`
 *
 * with Rover's `${env.NAME}` / `${env.NAME:-default}` expansion in string values.
 */
import fs from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";

export interface SubgraphSource {
  name: string;
  routingUrl: string;
  schema: { file: string } | { subgraphUrl: string; headers: Record<string, string> };
}

export interface SupergraphConfig {
  federationVersion: string | null;
  subgraphs: SubgraphSource[];
}

export class SupergraphConfigError extends Error {
  constructor(configPath: string, problem: string) {
    super(`${configPath}: ${problem}`);
    this.name = "SupergraphConfigError";
  }
}

type Env = Record<string, string | undefined>;

export function readSupergraphConfig(configPath: string, env: Env): SupergraphConfig {
  let text: string;
  try {
    text = fs.readFileSync(configPath, "utf8");
  } catch (error) {
    throw new SupergraphConfigError(configPath, `cannot be read (${(error as Error).message})`);
  }
  return parseSupergraphConfig(text, configPath, env);
}

export function parseSupergraphConfig(text: string, configPath: string, env: Env): SupergraphConfig {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new SupergraphConfigError(configPath, `is not valid YAML: ${(error as Error).message}`);
  }
  const fail = (problem: string) => new SupergraphConfigError(configPath, problem);
  if (!isRecord(document)) throw fail("must be a YAML mapping with a `subgraphs` key");
  const subgraphs = document.subgraphs;
  if (!isRecord(subgraphs) || Object.keys(subgraphs).length === 0) throw fail("`subgraphs` must map at least one subgraph name to its settings");

  const baseDir = path.dirname(path.resolve(configPath));
  const sources = Object.entries(subgraphs).map(([name, settings]): SubgraphSource => {
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) throw fail(`subgraph name "${name}" must start with a letter and use letters, digits, _ or -`);
    if (!isRecord(settings)) throw fail(`subgraphs.${name} must be a mapping with routing_url and schema`);
    const routingUrl = expand(settings.routing_url, `subgraphs.${name}.routing_url`, env, fail);
    if (!/^https?:\/\//.test(routingUrl)) throw fail(`subgraphs.${name}.routing_url must be an http(s) URL, got "${routingUrl}"`);
    const schema = settings.schema;
    if (!isRecord(schema)) throw fail(`subgraphs.${name}.schema must have \`file\` or \`subgraph_url\``);
    if (schema.file !== undefined) {
      const file = expand(schema.file, `subgraphs.${name}.schema.file`, env, fail);
      return { name, routingUrl, schema: { file: path.resolve(baseDir, file) } };
    }
    if (schema.subgraph_url !== undefined) {
      const subgraphUrl = expand(schema.subgraph_url, `subgraphs.${name}.schema.subgraph_url`, env, fail);
      const headers: Record<string, string> = {};
      if (isRecord(schema.introspection_headers)) {
        for (const [header, value] of Object.entries(schema.introspection_headers)) {
          headers[header] = expand(value, `subgraphs.${name}.schema.introspection_headers.${header}`, env, fail);
        }
      }
      return { name, routingUrl, schema: { subgraphUrl, headers } };
    }
    throw fail(`subgraphs.${name}.schema must have \`file\` or \`subgraph_url\` (graphref and introspection sources are not supported offline)`);
  });

  const version = document.federation_version;
  return { federationVersion: version === undefined ? null : String(version), subgraphs: sources };
}

/** Rover's expansion syntax: `${env.NAME}` (required) and `${env.NAME:-default}`. */
function expand(value: unknown, where: string, env: Env, fail: (problem: string) => Error): string {
  if (typeof value !== "string" || value.trim() === "") throw fail(`${where} must be a non-empty string`);
  return value.replace(/\$\{env\.([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    throw fail(`${where} uses \${env.${name}}, but the environment variable ${name} is not set`);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
