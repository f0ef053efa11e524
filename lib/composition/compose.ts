/**
 * Composes the supergraph from supergraph.yaml with The Guild's Federation v2 composer
 * (MIT, runs offline; Rover would download a binary). Errors are the composer's own messages,
 * prefixed with the subgraph they concern where the composer says so.
 */
import fs from "node:fs";
import { parse, type DocumentNode } from "graphql";
import { composeServices } from "@theguild/federation-composition";
import type { SubgraphSource, SupergraphConfig } from "./supergraph-config.js";

export interface LoadedSubgraph {
  name: string;
  url: string;
  typeDefs: DocumentNode;
}

export class CompositionError extends Error {
  constructor(readonly problems: string[]) {
    super(`Composition failed with ${problems.length} error(s):\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "CompositionError";
  }
}

export async function loadSubgraphSchemas(config: SupergraphConfig): Promise<LoadedSubgraph[]> {
  return Promise.all(config.subgraphs.map(async (source) => ({ name: source.name, url: source.routingUrl, typeDefs: await loadSchema(source) })));
}

async function loadSchema(source: SubgraphSource): Promise<DocumentNode> {
  let sdl: string;
  if ("file" in source.schema) {
    try {
      sdl = fs.readFileSync(source.schema.file, "utf8");
    } catch (error) {
      throw new CompositionError([`[${source.name}] cannot read schema file ${source.schema.file}: ${(error as Error).message}`]);
    }
  } else {
    sdl = await fetchServiceSdl(source.name, source.schema.subgraphUrl, source.schema.headers);
  }
  try {
    return parse(sdl);
  } catch (error) {
    throw new CompositionError([`[${source.name}] schema does not parse: ${(error as Error).message}`]);
  }
}

/** Federation's own introspection (`_service { sdl }`), which keeps the federation directives that plain introspection drops. */
async function fetchServiceSdl(name: string, url: string, headers: Record<string, string>): Promise<string> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ query: "{ _service { sdl } }" }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json()) as { data?: { _service?: { sdl?: string } }; errors?: { message: string }[] };
    const sdl = body.data?._service?.sdl;
    if (!sdl) throw new Error(body.errors?.map((error) => error.message).join("; ") || `HTTP ${response.status}`);
    return sdl;
  } catch (error) {
    throw new CompositionError([`[${name}] cannot fetch its schema from ${url}: ${(error as Error).message}`]);
  }
}

export function composeSupergraph(subgraphs: LoadedSubgraph[]): string {
  const result = composeServices(subgraphs.map((subgraph) => ({ name: subgraph.name, typeDefs: subgraph.typeDefs, url: subgraph.url })));
  if (result.errors) throw new CompositionError(result.errors.map((error) => error.message));
  return result.supergraphSdl;
}

/** Reads every subgraph's schema and composes them: the one call `npm run compose` and `npm start` make. */
export async function composeFromConfig(config: SupergraphConfig): Promise<string> {
  return composeSupergraph(await loadSubgraphSchemas(config));
}
