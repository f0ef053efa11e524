/**
 * One search hit: an icon and a visible label for its kind, its title linked where the item
 * lives (a conversation at the matched message, a document at the matched chunk, a knowledge
 * base passage's source, a web result's page, a Slack message's permalink), and its highlights.
 */
import { Link } from "react-router";
import { useApolloClient } from "@apollo/client/react";
import { recordSearchClick } from "../analytics/record-search-click";
import { Highlight } from "../components/Highlight";
import { PersonName } from "../components/PersonName";
import { formatDate } from "../dates";
import { conversationPath, documentPath, FROM_RESULTS, webLink } from "./hit-links";
import type { Person, SearchHit, SearchItem } from "./operations";

type KindName = SearchItem["__typename"];

/**
 * How each kind looks: an icon (inline SVG paths on a 16×16 grid, decorative and hidden from
 * screen readers; no image is fetched) and a label people read.
 */
const KINDS: Record<KindName, { label: string; icon: string }> = {
  Conversation: { label: "Conversation", icon: "M2 3h12v8H6l-3 3v-3H2z" },
  DocumentChunk: { label: "Document", icon: "M3 1h7l3 3v11H3zM10 1v3h3M5 7h6M5 10h6M5 13h4" },
  KnowledgeBasePassage: { label: "Knowledge base", icon: "M2 2h4v12H2zM7 2h3v12H7zM11 3l3 1-2 10-3-1" },
  WebResult: { label: "Web", icon: "M8 1a7 7 0 1 0 0 14A7 7 0 1 0 8 1M1 8h14M8 1c-3 3-3 11 0 14M8 1c3 3 3 11 0 14" },
  SlackMessage: { label: "Slack", icon: "M6 1 4 15M12 1l-2 14M1 5h14M1 11h14" },
  LinkedInPost: { label: "LinkedIn", icon: "M2 2h12v12H2zM5 7v5M5 4.5v.5M8 12V7M8 9c0-2 3-2.5 3 0v3" },
};

/** Who said a quoted message, as a person would put it. */
const ROLE_WORDS: Record<string, string> = { USER: "Question", ASSISTANT: "Answer", SYSTEM: "Instructions", TOOL: "Tool output" };

function KindIcon({ path }: { path: string }) {
  return (
    <svg className="hit-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      <path d={path} fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinejoin="round" />
    </svg>
  );
}

function Title({ hit, query }: { hit: SearchHit & { item: SearchItem }; query: string }) {
  const { item } = hit;
  switch (item.__typename) {
    case "Conversation": {
      const messageId = hit.highlights?.find((highlight) => highlight.messageId)?.messageId;
      return <Link state={FROM_RESULTS} to={conversationPath(item.id, messageId, query)}>{item.title}</Link>;
    }
    case "DocumentChunk": {
      const where = [item.headingPath.join(" › "), item.page !== null ? `page ${item.page}` : ""].filter(Boolean).join(", ");
      return (
        <>
          <Link state={FROM_RESULTS} to={documentPath(item.document.id, item.id, query)}>{item.document.fileName}</Link>
          {where ? <span className="hit-where"> — {where}</span> : null}
        </>
      );
    }
    case "KnowledgeBasePassage": {
      const name = item.knowledgeBase?.name ?? "Knowledge base passage";
      const source = webLink(item.uri);
      return (
        <>
          {source ? (
            <a href={source} target="_blank" rel="noopener noreferrer">
              {name}
              <span className="visually-hidden"> (opens in a new tab)</span>
            </a>
          ) : (
            <span>{name}</span>
          )}
          {item.uri && !source ? <span className="hit-where"> — {item.uri}</span> : null}
        </>
      );
    }
    case "WebResult": {
      const url = webLink(item.url);
      return url ? (
        <a href={url} target="_blank" rel="noopener noreferrer">
          {item.title || item.url}
          <span className="visually-hidden"> (opens in a new tab)</span>
        </a>
      ) : (
        <span>{item.title || item.url}</span>
      );
    }
    case "SlackMessage": {
      const label = `${item.channelName ? `#${item.channelName}` : "Slack message"}${item.author ? ` · ${item.author}` : ""}`;
      const permalink = webLink(item.permalink);
      return permalink ? (
        <a href={permalink} target="_blank" rel="noopener noreferrer">
          {label}
          <span className="visually-hidden"> (opens in a new tab)</span>
        </a>
      ) : (
        <span>{label}</span>
      );
    }
    case "LinkedInPost": {
      const label = `LinkedIn post${item.articleTitle ? ` · ${item.articleTitle}` : ""} · ${item.publishedAt.slice(0, 10)}`;
      const url = webLink(item.url);
      return url ? (
        <a href={url} target="_blank" rel="noopener noreferrer">
          {label}
          <span className="visually-hidden"> (opens in a new tab)</span>
        </a>
      ) : (
        <span>{label}</span>
      );
    }
  }
}

/** Who and when, as the item knows them: the owner or author and the date that tells its age. */
function metaOf(item: SearchItem): { person: Person | null; author: string | null; date: { iso: string; label: string } | null; extra: string | null } {
  switch (item.__typename) {
    case "Conversation":
      return { person: item.owner, author: null, date: { iso: item.updatedAt, label: item.updatedAt !== item.createdAt ? "Updated" : "Started" }, extra: null };
    case "DocumentChunk":
      return { person: item.document.owner, author: null, date: { iso: item.document.createdAt, label: "Uploaded" }, extra: item.document.category };
    case "SlackMessage":
      return { person: null, author: item.author, date: { iso: item.postedAt, label: "Posted" }, extra: null };
    case "LinkedInPost":
      return { person: null, author: null, date: { iso: item.publishedAt, label: "Published" }, extra: null };
    case "KnowledgeBasePassage":
      return { person: null, author: null, date: null, extra: item.knowledgeBase?.name ?? null };
    case "WebResult":
      return { person: null, author: null, date: null, extra: null };
  }
}

function HitMeta({ item }: { item: SearchItem }) {
  const meta = metaOf(item);
  if (!meta.person && !meta.author && !meta.date && !meta.extra) return null;
  return (
    <p className="hit-meta">
      {meta.person ? <PersonName person={meta.person} /> : meta.author ? <span className="person-name">{meta.author}</span> : null}
      {meta.date ? (
        <span>
          {meta.date.label} <time dateTime={meta.date.iso}>{formatDate(meta.date.iso)}</time>
        </span>
      ) : null}
      {meta.extra ? <span>{meta.extra}</span> : null}
    </p>
  );
}

/** `searchId` and `position` (1-based): opening a title link records the click for analytics. */
export function SearchHitCard({ hit, query, searchId, position }: { hit: SearchHit; query: string; searchId?: string | null; position?: number }) {
  const client = useApolloClient();
  // An item deleted after a cached page was stored: say so rather than show an empty card.
  if (!hit.item) {
    return (
      <article className="search-hit">
        <p className="hint">This item was deleted after the search ran.</p>
      </article>
    );
  }
  const kind = KINDS[hit.item.__typename];
  const withItem = hit as SearchHit & { item: SearchItem };
  return (
    <article className="search-hit" data-kind={hit.item.__typename}>
      <h2
        className="hit-title"
        onClick={(event) => {
          if (searchId && position && hit.item && (event.target as Element).closest("a")) recordSearchClick(client, { searchId, position, item: hit.item });
        }}
      >
        <span className="hit-kind">
          <KindIcon path={kind.icon} />
          {kind.label}
        </span>{" "}
        <Title hit={withItem} query={query} />
      </h2>
      {hit.item.__typename === "WebResult" ? <p className="hit-url">{hit.item.url}</p> : null}
      <HitMeta item={hit.item} />
      {hit.highlights?.length ? (
        <ul className="hit-highlights">
          {hit.highlights.map((highlight, index) => (
            <li key={index}>
              {highlight.role ? <span className="hit-role">{ROLE_WORDS[highlight.role] ?? highlight.role.toLowerCase()}: </span> : null}
              <Highlight highlight={highlight} />
            </li>
          ))}
        </ul>
      ) : null}
    </article>
  );
}
