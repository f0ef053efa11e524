/**
 * Messages and passages render their Markdown (MarkdownText.tsx), and what a message holds never
 * becomes live markup: raw HTML is text, a `javascript:` link has no address, an image is not
 * loaded. Tool calls and results are a closed disclosure of formatted JSON (ToolMessage.tsx);
 * a search's highlight shows its blocks on one line (Highlight.tsx). Rendered with
 * react-dom/server, as the other component tests are.
 */
import fc from "fast-check";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Highlight } from "../src/components/Highlight";
import { queryTerms } from "../src/conversations/MarkedWords";
import { ToolMessage, toolPayload } from "../src/conversations/ToolMessage";
import { MarkdownText, safeUrl } from "../src/markdown/MarkdownText";

const render = (text: string, options: { terms?: string; headingOffset?: number } = {}) =>
  renderToStaticMarkup(<MarkdownText text={text} terms={queryTerms(options.terms)} headingOffset={options.headingOffset ?? 2} />);

/** The visible text of rendered HTML (tags dropped, the few entities React writes decoded). */
const visibleText = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");

/** Every element and attribute of rendered HTML, as `tag attr=value` strings. */
const elements = (html: string) => [...html.matchAll(/<([a-z0-9]+)([^>]*)>/g)].map((match) => ({ tag: match[1]!, attributes: match[2]! }));

describe("MarkdownText", () => {
  it("renders headings, emphasis, lists, code blocks and GFM tables as elements, with none of their markup left as text", () => {
    const markdown = [
      "## Deploy **checklist**",
      "",
      "Run the `migrations` first, *then* deploy.",
      "",
      "- one",
      "- [x] two",
      "",
      "```sql",
      "SELECT 1;",
      "```",
      "",
      "| Service | p99 |",
      "| --- | ---: |",
      "| api | 340 ms |",
    ].join("\n");
    const html = render(markdown);
    expect(html).toContain("<h4 class=\"markdown-heading\">Deploy <strong>checklist</strong></h4>");
    expect(html).toContain("<code>migrations</code>");
    expect(html).toContain("<em>then</em>");
    expect(html).toMatch(/<ul[^>]*>[\s\S]*<li>one<\/li>/);
    expect(html).toMatch(/<pre tabindex="0"><code class="language-sql">SELECT 1;\n<\/code><\/pre>/);
    expect(html).toMatch(/<table>[\s\S]*<th>Service<\/th>[\s\S]*<td>api<\/td>/);
    const text = visibleText(html);
    for (const markup of ["##", "**", "```", "| --- |", "`", "- one"]) expect(text).not.toContain(markup);
  });

  it("names a task list's boxes, which are not form fields to fill in", () => {
    const html = render("- [x] shipped\n- [ ] tested");
    const boxes = elements(html).filter((element) => element.tag === "input");
    expect(boxes).toHaveLength(2);
    for (const attribute of ['type="checkbox"', 'checked=""', 'disabled=""', 'aria-label="Done"']) expect(boxes[0]!.attributes).toContain(attribute);
    expect(boxes[1]!.attributes).toMatch(/aria-label="Not done"/);
    expect(boxes[1]!.attributes).not.toContain("checked");
  });

  it("moves the text's headings below the page's own", () => {
    expect(render("# Title", { headingOffset: 1 })).toContain("<h2");
    expect(render("###### Deepest", { headingOffset: 2 })).toContain("<h6");
  });

  it("shows raw HTML as the text written: no script, no image with a handler, no live tag", () => {
    const hostile = [
      "<script>alert('x')</script>",
      "",
      'Inline <img src="x" onerror="alert(1)"> and <b onclick="alert(2)">bold</b> and <iframe src="https://evil.example"></iframe>.',
      "",
      '<a href="javascript:alert(3)">click</a>',
    ].join("\n");
    const html = render(hostile);
    const tags = elements(html).map((element) => element.tag);
    for (const tag of ["script", "img", "b", "iframe", "a"]) expect(tags).not.toContain(tag);
    expect(html).not.toMatch(/<[a-z0-9]+[^>]*\son[a-z]+=/i);
    expect(html).not.toMatch(/href="javascript:/i);
    // What was written is still there, as text.
    expect(visibleText(html)).toContain("<script>alert('x')</script>");
    expect(visibleText(html)).toContain('<img src="x" onerror="alert(1)">');
  });

  it("links only to http(s) and relative addresses, and opens another site without access back", () => {
    const html = render("[ok](https://example.com/a) [rel](/documents/1) [bad](javascript:alert(1)) [data](data:text/html,<b>x</b>) [vb](vbscript:x) [tab](java\tscript:alert(1))");
    const links = elements(html).filter((element) => element.tag === "a");
    expect(links.map((link) => /href="([^"]*)"/.exec(link.attributes)?.[1])).toEqual(["https://example.com/a", "/documents/1"]);
    expect(links[0]!.attributes).toContain('target="_blank"');
    expect(links[0]!.attributes).toContain('rel="noopener noreferrer nofollow"');
    expect(links[1]!.attributes).not.toContain("target");
    expect(visibleText(html)).toContain("bad");
    expect(html).not.toMatch(/(?:javascript|vbscript|data):/i);
  });

  it("never loads an image: it is a link named by its alt text", () => {
    const html = render("![the diagram](https://example.com/d.png) ![](javascript:alert(1))");
    expect(elements(html).map((element) => element.tag)).not.toContain("img");
    expect(html).toContain('<a href="https://example.com/d.png" target="_blank" rel="noopener noreferrer nofollow">Image: the diagram</a>');
    expect(html).not.toContain("javascript:");
  });

  it("marks the query's words in the rendered text, not in the markup", () => {
    const html = render("The **deadlocks** in [deadlock docs](https://example.com/deadlock) and `deadlock_timeout`.", { terms: "deadlock" });
    expect(html).toContain("<strong><mark>deadlocks</mark></strong>");
    expect(html).toContain('<a href="https://example.com/deadlock" target="_blank" rel="noopener noreferrer nofollow"><mark>deadlock</mark> docs</a>');
  });

  it("renders any text without throwing and without a live tag or handler", () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom("<script>", "</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "![x](javascript:1)", "```", "| a | b |\n| - | - |", "**", "<style>", "<svg onload=alert(1)>", "\n\n", "# ", "> ", "- "),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join("")), (text) => {
        const html = render(text);
        const tags = elements(html).map((element) => element.tag);
        for (const tag of ["script", "img", "style", "svg", "iframe"]) expect(tags).not.toContain(tag);
        expect(html).not.toMatch(/<[a-z0-9]+[^>]*\son[a-z]+=/i);
        expect(html).not.toMatch(/href="\s*javascript:/i);
      }),
      { numRuns: 300 },
    );
  });
});

describe("safeUrl", () => {
  it("keeps http(s) and relative addresses, and nothing else", () => {
    expect(["https://a.example/x", "HTTP://a.example", "/x", "x/y", "?q=1", "#top", "../up"].map(safeUrl)).toEqual(["https://a.example/x", "HTTP://a.example", "/x", "x/y", "?q=1", "#top", "../up"]);
    expect(["javascript:alert(1)", " JavaScript:x", "data:text/html,x", "vbscript:x", "mailto:a@b", "//evil.example/x", "\\\\evil"].map(safeUrl)).toEqual([null, null, null, null, null, null, null]);
  });
});

describe("tool messages", () => {
  const result = JSON.stringify({ tool: "search_docs", query: "deadlock runbook", results: [{ title: "Runbook", url: "https://wiki/x" }] }, null, 2);

  it("reads a TOOL message as a tool result and an assistant's bare JSON object as a tool call", () => {
    expect(toolPayload("TOOL", result)).toMatchObject({ kind: "Tool result", name: "search_docs" });
    expect(toolPayload("ASSISTANT", '{"name":"get_weather","arguments":{"city":"Lisbon"}}')).toEqual({ kind: "Tool call", name: "get_weather", code: '{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Lisbon"\n  }\n}' });
    expect(toolPayload("ASSISTANT", "Here is {the} answer")).toBeNull();
    expect(toolPayload("USER", '{"a":1}')).toBeNull();
    expect(toolPayload("TOOL", "plain output")).toEqual({ kind: "Tool result", name: null, code: "plain output" });
  });

  it("shows the JSON formatted in a closed disclosure, opened and marked when it is the linked message", () => {
    const payload = toolPayload("TOOL", result)!;
    const closed = renderToStaticMarkup(<ToolMessage payload={payload} open={false} terms={null} />);
    expect(closed).toMatch(/^<details class="tool-message"><summary>Tool result: <code>search_docs<\/code><\/summary><pre tabindex="0"><code>\{\n {2}&quot;tool&quot;/);
    const open = renderToStaticMarkup(<ToolMessage payload={payload} open terms={queryTerms("deadlock")} />);
    expect(open).toContain('<details class="tool-message" open="">');
    expect(open).toContain("<mark>deadlock</mark> runbook");
  });
});

describe("Highlight", () => {
  it("shows a passage's blocks on one line, the matches still marked", () => {
    const html = renderToStaticMarkup(<Highlight highlight={{ text: "Deploy checklist\nRun the deadlock check.\napi · 340 ms", matches: [{ start: 25, end: 33 }], truncatedBefore: false, truncatedAfter: true }} />);
    expect(html).toBe("<span>Deploy checklist · Run the </span><mark>deadlock</mark><span> check. api · 340 ms</span>…");
  });
});
