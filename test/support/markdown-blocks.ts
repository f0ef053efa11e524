/**
 * Reads the fenced code blocks of a Markdown file, with the doc-test directives written right
 * above each, for test/e2e/readme-examples.test.ts. No Markdown parser is among the project's
 * dependencies, and fences are all the doc test needs: CommonMark's rules for them (an opening run
 * of 3+ backticks or tildes indented at most 3 spaces, an info string whose first word is the
 * language, a closing run of the same character at least as long) are a few lines.
 *
 * The directives (HTML comments, so they do not show on the rendered page):
 *   <!-- doc-test: skip — <why it cannot run in the test> -->   the block is not run; the reason is required
 *   <!-- doc-test: expect "<text>" -->                           what the block's output must contain (a JSON string)
 * A ```json block right after a ```graphql block holds its variables, as GraphiQL's Variables pane does.
 */

export interface Directive {
  kind: "skip" | "expect";
  /** The skip's reason, or the text the output must contain. */
  value: string;
}

export interface FencedBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word, lower-cased ("" when there is none). */
  language: string;
  body: string;
  directives: Directive[];
  /** The ```json block right after this one (only blank lines between), if any. */
  next: FencedBlock | null;
}

export interface MarkdownBlocks {
  blocks: FencedBlock[];
  /** What breaks the conventions, each naming its line: the doc test fails on any. */
  problems: string[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const DIRECTIVE = /^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$/;

export function readFencedBlocks(markdown: string, fileName: string): MarkdownBlocks {
  const lines = markdown.split("\n");
  const blocks: FencedBlock[] = [];
  const problems: string[] = [];
  let pending: { line: number; directive: Directive }[] = [];
  let previous: { block: FencedBlock; endLine: number } | null = null;

  for (let index = 0; index < lines.length; index++) {
    const text = lines[index]!;
    const directive = DIRECTIVE.exec(text);
    if (directive) {
      const parsed = parseDirective(directive[1]!);
      if (typeof parsed === "string") problems.push(`${fileName}:${index + 1}: ${parsed}`);
      else pending.push({ line: index + 1, directive: parsed });
      continue;
    }
    const fence = FENCE.exec(text);
    if (!fence) {
      if (text.trim() !== "") {
        for (const { line } of pending) problems.push(`${fileName}:${line}: a doc-test directive must sit right above a fenced block (blank lines only between)`);
        pending = [];
      }
      continue;
    }
    const marker = fence[1]!;
    const closing = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
    const start = index;
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end]!)) end++;
    if (end >= lines.length) problems.push(`${fileName}:${start + 1}: this fenced block is never closed`);
    const block: FencedBlock = {
      line: start + 1,
      language: fence[2]!.toLowerCase(),
      body: lines.slice(start + 1, end).join("\n"),
      directives: pending.map((entry) => entry.directive),
      next: null,
    };
    pending = [];
    if (block.language === "") problems.push(`${fileName}:${block.line}: a fenced block without a language: name it (sh, graphql, json, text for output…), so the doc test knows whether it runs`);
    if (block.directives.some((entry) => entry.kind === "skip") && block.directives.some((entry) => entry.kind === "expect")) {
      problems.push(`${fileName}:${block.line}: a block is either skipped or expected to print something, not both`);
    }
    if (previous && block.language === "json" && lines.slice(previous.endLine + 1, start).every((between) => between.trim() === "")) previous.block.next = block;
    blocks.push(block);
    previous = { block, endLine: end };
    index = end;
  }
  for (const { line } of pending) problems.push(`${fileName}:${line}: a doc-test directive must sit right above a fenced block`);
  return { blocks, problems };
}

function parseDirective(text: string): Directive | string {
  const skip = /^skip(?:\s*[—–:-]\s*(.*))?$/s.exec(text);
  if (skip) {
    const reason = skip[1]?.trim() ?? "";
    return reason.length > 0 ? { kind: "skip", value: reason } : "doc-test: skip needs a reason (<!-- doc-test: skip — why it cannot run in the test -->)";
  }
  const expect = /^expect\s+(.*)$/s.exec(text);
  if (expect) {
    try {
      const value = JSON.parse(expect[1]!) as unknown;
      if (typeof value === "string" && value.length > 0) return { kind: "expect", value };
    } catch {
      // Falls through to the message below.
    }
    return `doc-test: expect takes a JSON string, e.g. <!-- doc-test: expect "totalCount" -->; got ${expect[1]}`;
  }
  return `unknown doc-test directive "${text}": the directives are skip — <reason> and expect "<text>"`;
}

/** The languages the doc test runs: shell blocks with bash, GraphQL blocks through the gateway. */
export const SHELL_LANGUAGES = new Set(["sh", "bash", "shell"]);
export const RUNNABLE_LANGUAGES = new Set([...SHELL_LANGUAGES, "graphql"]);
