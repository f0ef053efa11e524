/**
 * One hit of a saved search's run: what it is (a conversation, a document's passage, a web
 * page, a Slack message), a link to open it, and its best matching passage.
 */
import { Link } from "react-router";
import { Highlight } from "../components/Highlight";
import type { HitItem, RunHit } from "./operations";

function HitTitle({ item }: { item: HitItem | null }) {
  if (!item) return <span className="hit-gone">No longer available</span>;
  switch (item.__typename) {
    case "Conversation":
      return <Link to={`/conversations/${encodeURIComponent(item.id)}`}>{item.title}</Link>;
    case "DocumentChunk":
      return (
        <Link to={`/documents/${encodeURIComponent(item.document.id)}`}>
          {item.document.fileName}
          {item.headingPath.length > 0 ? ` › ${item.headingPath.join(" › ")}` : ""}
        </Link>
      );
    case "WebResult":
      return <ExternalLink href={item.url}>{item.title}</ExternalLink>;
    case "SlackMessage":
      return item.permalink ? <ExternalLink href={item.permalink}>{`Slack #${item.channelName ?? "message"}`}</ExternalLink> : <span>{`Slack #${item.channelName ?? "message"}`}</span>;
    case "KnowledgeBasePassage":
      return <span>{item.uri ?? "Knowledge base passage"}</span>;
    case "LinkedInPost":
      return <ExternalLink href={item.url}>LinkedIn post</ExternalLink>;
  }
}

/** Only http(s) links from server text: a `javascript:` URL is shown as text, never followed. */
function ExternalLink({ href, children }: { href: string; children: string }) {
  if (!/^https?:\/\//i.test(href)) return <span>{children}</span>;
  return (
    <a href={href} rel="noopener noreferrer" target="_blank">
      {children}
      <span className="visually-hidden"> (opens in a new tab)</span>
    </a>
  );
}

const KIND: Record<HitItem["__typename"], string> = {
  Conversation: "Conversation",
  DocumentChunk: "Document",
  KnowledgeBasePassage: "Knowledge base",
  WebResult: "Web",
  SlackMessage: "Slack",
  LinkedInPost: "LinkedIn",
};

/** A hit's identity across the two lists of a run (`result.hits` and `newHits`). */
export function hitKey(hit: RunHit): string | null {
  return hit.item ? `${hit.item.__typename}:${hit.item.id}` : null;
}

export function SavedSearchHit({ hit, isNew }: { hit: RunHit; isNew: boolean }) {
  const passage = hit.highlights?.[0];
  return (
    <li className="run-hit">
      <div className="run-hit-title">
        {hit.item ? <span className="hit-kind">{KIND[hit.item.__typename]}</span> : null}
        <HitTitle item={hit.item} />
        {isNew ? <span className="new-badge">New</span> : null}
      </div>
      {passage ? (
        <p className="run-hit-passage">
          <Highlight highlight={passage} />
        </p>
      ) : null}
    </li>
  );
}
