/**
 * A message or a document passage as people read it: its Markdown rendered (GitHub's flavour:
 * tables, lists, task lists, code blocks, links) by react-markdown, which builds React elements,
 * never HTML strings. What was written stays data:
 * - raw HTML is shown as the text written (plugins.ts: rawHtmlAsText), never as markup;
 * - rehype-sanitize (GitHub's schema) then keeps only plain document elements and attributes;
 * - a link goes only to http(s) or a relative address (any other scheme, `javascript:` among
 *   them, loses its address), and one to another site opens in a new tab without access back
 *   to this one (rel="noopener noreferrer");
 * - images are not loaded (a message could track who reads it): an image is a link to it,
 *   named by its alt text.
 * Headings of the text are moved below the page's own (`headingOffset`), so the page's outline
 * stays one, and the query's words from a search link are marked (plugins.ts: markQueryWords).
 *
 * This module pulls in the Markdown parser: only the conversation and document pages, which the
 * app loads lazily, import it, so the search page's bundle does not grow (bundle-size.test.ts).
 */
import type { ComponentPropsWithoutRef, ReactNode } from "react";
import Markdown, { type Components } from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import type { QueryLexemes } from "../../../lib/retrieval/english-analyzer";
import { markQueryWords, rawHtmlAsText } from "./plugins";
import "./markdown.css";

/** An address a link may go to: http(s), or relative to this site (a path, a query, a fragment). */
export function safeUrl(url: string): string | null {
  const value = url.trim();
  if (/^https?:\/\//i.test(value)) return value;
  // No scheme at all (a colon before any slash, question mark or hash would be one).
  if (!/^[^/?#]*:/.test(value) && !value.startsWith("//") && !/^[\\]/.test(value)) return value;
  return null;
}

function isExternal(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

function Link({ href, children }: ComponentPropsWithoutRef<"a">): ReactNode {
  const url = href ? safeUrl(href) : null;
  if (!url) return <span className="markdown-unlinked">{children}</span>;
  return isExternal(url) ? (
    <a href={url} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  ) : (
    <a href={url}>{children}</a>
  );
}

/** A task list's box: shown, not a form control to fill in, and named, so a screen reader says which. */
function TaskBox({ type, checked }: ComponentPropsWithoutRef<"input">): ReactNode {
  if (type !== "checkbox") return null;
  return <input type="checkbox" checked={Boolean(checked)} disabled readOnly aria-label={checked ? "Done" : "Not done"} />;
}

function Image({ src, alt }: ComponentPropsWithoutRef<"img">): ReactNode {
  const url = typeof src === "string" ? safeUrl(src) : null;
  const label = alt?.trim() ? `Image: ${alt}` : "Image";
  if (!url) return <span className="markdown-unlinked">{label}</span>;
  return (
    <a href={url} target="_blank" rel="noopener noreferrer nofollow">
      {label}
    </a>
  );
}

/** A heading of the text, `offset` levels below where it was written (at most h6). */
function headingAt(depth: number, offset: number) {
  const level = Math.min(6, depth + offset) as 1 | 2 | 3 | 4 | 5 | 6;
  const Tag = `h${level}` as const;
  return ({ children }: ComponentPropsWithoutRef<"h1">) => <Tag className="markdown-heading">{children}</Tag>;
}

const componentsByOffset = new Map<number, Components>();

function components(headingOffset: number): Components {
  let found = componentsByOffset.get(headingOffset);
  if (!found) {
    found = {
      a: Link,
      img: Image,
      input: TaskBox,
      h1: headingAt(1, headingOffset),
      h2: headingAt(2, headingOffset),
      h3: headingAt(3, headingOffset),
      h4: headingAt(4, headingOffset),
      h5: headingAt(5, headingOffset),
      h6: headingAt(6, headingOffset),
      // A wide table or code block scrolls inside the message rather than widening the page,
      // and can be focused, so a keyboard can scroll it too.
      table: ({ children }) => (
        <div className="markdown-table" tabIndex={0}>
          <table>{children}</table>
        </div>
      ),
      pre: ({ children }) => <pre tabIndex={0}>{children}</pre>,
    };
    componentsByOffset.set(headingOffset, found);
  }
  return found;
}

export interface MarkdownTextProps {
  text: string;
  /** The query's words to mark (from a search link), or null. */
  terms?: QueryLexemes | null;
  /** Levels a heading of the text moves down: the page's own headings stay above it. */
  headingOffset?: number;
}

export function MarkdownText({ text, terms = null, headingOffset = 2 }: MarkdownTextProps) {
  return (
    <div className="markdown">
      <Markdown
        remarkPlugins={[remarkGfm, rawHtmlAsText]}
        rehypePlugins={[rehypeSanitize, [markQueryWords, { terms }]]}
        urlTransform={(url) => safeUrl(url) ?? ""}
        components={components(headingOffset)}
      >
        {text}
      </Markdown>
    </div>
  );
}
