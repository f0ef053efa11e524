/**
 * Two small tree transforms for MarkdownText.tsx, kept apart so they can be tested without React:
 *
 * - rawHtmlAsText (remark): HTML written in a message ("<script>", "<img onerror=…>", a "<b>"
 *   someone asked about) is shown as the characters written, never as markup. react-markdown
 *   would drop it once sanitized; as text nothing of what was written is lost and nothing runs.
 * - markQueryWords (rehype): the words of the query from a search link, wrapped in <mark> inside
 *   the rendered text, matched by the analyzer the search's own highlights use (MarkedWords.tsx).
 */
import { matchingRuns, type QueryLexemes } from "../../../lib/retrieval/english-analyzer";

/** The little of unist's node shape these transforms read (mdast and hast nodes both have it). */
interface TreeNode {
  type: string;
  value?: string;
  tagName?: string;
  properties?: Record<string, unknown>;
  children?: TreeNode[];
}

/** Where raw HTML may stand as a block: there it becomes a paragraph of its text. */
const BLOCK_PARENTS = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

export function rawHtmlAsText() {
  return (tree: TreeNode) => {
    const walk = (node: TreeNode) => {
      if (!node.children) return;
      node.children = node.children.map((child) => {
        if (child.type !== "html") {
          walk(child);
          return child;
        }
        const text: TreeNode = { type: "text", value: child.value ?? "" };
        return BLOCK_PARENTS.has(node.type) ? { type: "paragraph", children: [text] } : text;
      });
    };
    walk(tree);
  };
}

export function markQueryWords(options: { terms: QueryLexemes | null }) {
  return (tree: TreeNode) => {
    const terms = options.terms;
    if (!terms) return;
    const walk = (node: TreeNode) => {
      if (!node.children) return;
      node.children = node.children.flatMap((child) => {
        if (child.type === "text" && child.value) return marked(child.value, terms);
        walk(child);
        return [child];
      });
    };
    walk(tree);
  };
}

/** A text node cut at the query's words: plain text between <mark> elements. */
function marked(value: string, terms: QueryLexemes): TreeNode[] {
  const runs = matchingRuns(value, terms).runs;
  if (runs.length === 0) return [{ type: "text", value }];
  const nodes: TreeNode[] = [];
  let position = 0;
  for (const { start, end } of runs) {
    if (start < position) continue;
    if (start > position) nodes.push({ type: "text", value: value.slice(position, start) });
    nodes.push({ type: "element", tagName: "mark", properties: {}, children: [{ type: "text", value: value.slice(start, end) }] });
    position = end;
  }
  if (position < value.length) nodes.push({ type: "text", value: value.slice(position) });
  return nodes;
}
