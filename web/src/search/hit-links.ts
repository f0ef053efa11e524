/**
 * Where a search hit's item lives, for every place that links to one: a hit card's title and an
 * answer's citations. A conversation opens at the matched message, a document at the matched
 * chunk (both carrying the query, so the page marks its words); the rest open their source on
 * the web, and only over http(s).
 */
import type { SearchItem } from "./operations";

/** Told to the page a hit opens: it offers "Back to results" as the browser's back (BackToResults.tsx). */
export const FROM_RESULTS = { fromResults: true };

/** Only http(s) links are followed: a knowledge base may name its source as s3://…, which a browser cannot open. */
export function webLink(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

export function withQuery(path: string, parameters: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value) search.set(name, value);
  return `${path}?${search}`;
}

/** A conversation's page, scrolled to `messageId` when given. */
export function conversationPath(conversationId: string, messageId: string | null | undefined, query: string): string {
  return withQuery(`/conversations/${encodeURIComponent(conversationId)}`, { message: messageId, q: query });
}

/** A document's page, scrolled to the chunk. */
export function documentPath(documentId: string, chunkId: string, query: string): string {
  return withQuery(`/documents/${encodeURIComponent(documentId)}`, { chunk: chunkId, q: query });
}

/** Where an item opens: a page of this app (`to`), a page on the web (`href`, a new tab), or nowhere. */
export type HitTarget = { to: string; href?: undefined } | { href: string; to?: undefined } | null;

export interface HitSource {
  /** What a person calls it: the conversation's title, the document's file name, the page's title. */
  name: string;
  target: HitTarget;
}

/** The name and link of an item, as a citation shows it. `messageId`: the conversation message the passage is from. */
export function hitSource(item: SearchItem, messageId: string | null | undefined, query: string): HitSource {
  const external = (url: string | null | undefined): HitTarget => {
    const href = webLink(url);
    return href ? { href } : null;
  };
  switch (item.__typename) {
    case "Conversation":
      return { name: item.title, target: { to: conversationPath(item.id, messageId, query) } };
    case "DocumentChunk":
      return { name: item.document.fileName, target: { to: documentPath(item.document.id, item.id, query) } };
    case "KnowledgeBasePassage":
      return { name: item.knowledgeBase?.name ?? "Knowledge base passage", target: external(item.uri) };
    case "WebResult":
      return { name: item.title || item.url, target: external(item.url) };
    case "SlackMessage":
      return { name: `${item.channelName ? `#${item.channelName}` : "Slack message"}${item.author ? ` · ${item.author}` : ""}`, target: external(item.permalink) };
    case "LinkedInPost":
      return { name: `LinkedIn post${item.articleTitle ? ` · ${item.articleTitle}` : ""}`, target: external(item.url) };
  }
}
