/**
 * `npm run platform-kb -- <command>`: a platform operator curates the platform's LOCAL knowledge
 * bases, whose documents every organization may read and search, and no organization may change.
 * It talks to the database directly (DATABASE_URL, or the embedded PGlite directory) as the
 * platform organization; there is no GraphQL mutation for any of this, and a tenant's token
 * aimed at a platform knowledge base is FORBIDDEN.
 *
 *   list                                              knowledge bases, their documents and indexing status
 *   add --name <name> [--description <text>] [--category <c>]   a new platform LOCAL knowledge base (prints its id)
 *   upload --kb <id> <file>... [--category <c>]       add files (text, Markdown, PDF, DOCX; DOCUMENT_MAX_BYTES each)
 *   remove --document <id>                            remove one document with its chunks and vectors
 *   remove --kb <id>                                  remove a knowledge base with all its documents
 *
 * Uploaded files are PENDING until the search subgraph's indexer (running, or `npm start`)
 * chunks and embeds them; `list` shows when they are READY.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { runMain } from "../lib/shutdown.js";
import { PlatformKnowledge } from "../subgraphs/knowledge-base/index.js";

const USAGE = "usage: npm run platform-kb -- list | add --name <name> [--description <text>] [--category <c>] | upload --kb <id> <file>... [--category <c>] | remove --document <id> | remove --kb <id>";

/** Runs one command against `platform`, writing what it did to `out`. Exported for the tests. */
export async function platformKnowledgeCommand(platform: PlatformKnowledge, argv: readonly string[], out: (line: string) => void): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: [...rest],
    allowPositionals: true,
    options: { name: { type: "string" }, description: { type: "string" }, category: { type: "string" }, kb: { type: "string" }, document: { type: "string" } },
  });
  switch (command) {
    case "list": {
      const listing = await platform.list();
      if (listing.length === 0) out("no platform knowledge bases yet: npm run platform-kb -- add --name <name>");
      for (const { knowledgeBase, documents } of listing) {
        out(`${knowledgeBase.id}  ${knowledgeBase.name} (${knowledgeBase.backend}, ${documents.length} document${documents.length === 1 ? "" : "s"})`);
        for (const document of documents) out(`  ${document.id}  ${document.fileName}  ${document.status}${document.failureReason ? `: ${document.failureReason}` : ""}`);
      }
      return;
    }
    case "add": {
      if (!values.name) throw new Error(`add needs --name\n${USAGE}`);
      const created = await platform.createKnowledgeBase({ name: values.name, description: values.description ?? null, category: values.category ?? null });
      out(`${created.id}  ${created.name}`);
      return;
    }
    case "upload": {
      if (!values.kb || positionals.length === 0) throw new Error(`upload needs --kb <id> and at least one file\n${USAGE}`);
      for (const file of positionals) {
        const document = await platform.upload(values.kb, { fileName: path.basename(file), bytes: await fs.readFile(file), category: values.category });
        out(`${document.id}  ${document.fileName}  ${document.status}`);
      }
      return;
    }
    case "remove": {
      if (values.document && !values.kb) {
        await platform.removeDocument(values.document);
        out(`removed document ${values.document}`);
      } else if (values.kb && !values.document) {
        const documents = await platform.removeKnowledgeBase(values.kb);
        out(`removed knowledge base ${values.kb} and its ${documents} document${documents === 1 ? "" : "s"}`);
      } else throw new Error(`remove needs exactly one of --document <id> or --kb <id>\n${USAGE}`);
      return;
    }
    default:
      throw new Error(USAGE);
  }
}

// Run only as the command, not when a test imports platformKnowledgeCommand.
if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  runMain(async () => {
    const config = loadConfig();
    const database = await openDatabase(config.database);
    try {
      await migrate(database);
      await platformKnowledgeCommand(new PlatformKnowledge(database.prisma, config.knowledgeBase.maxDocumentBytes), process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));
    } finally {
      await database.close();
    }
  });
}
