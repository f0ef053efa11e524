/**
 * One document: its metadata (name, format, category, status, size, dates, how often search
 * returned it) and its chunks in reading order (heading path, page, text), 50 a page with "Load
 * more chunks". A link from search names a chunk (`?chunk=<id>`) and the query (`?q=`): pages
 * are loaded until that chunk is there, then it is scrolled into view, marked and focused, and
 * the query's words in it are marked. Passages are rendered Markdown (MarkdownText.tsx).
 *
 * Sends `DocumentView` (the document and a page of its chunks), again with `after` for each
 * further page. While the document is still PENDING or INDEXING the query is polled every 2 s
 * (only the first page is shown then, so polling cannot drop loaded pages) until it is final.
 * A document that does not exist, was deleted or is not the caller's to see is null: the page
 * says so, the same in all three cases, as the API does. Its owner may change whom it is shared
 * with (SharingControl) and delete it (DeleteDocumentButton asks first, then goes back to the
 * list).
 */
import { BackToResults } from "../components/BackToResults";
import { PersonName } from "../components/PersonName";
import { gql } from "@apollo/client";
import { useQuery } from "@apollo/client/react";
import { useEffect, useMemo } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { queryTerms } from "../conversations/MarkedWords";
import { useLinkedPages } from "../conversations/reveal";
import { DeleteDocumentButton } from "../documents/DeleteDocumentButton";
import { NoCategory } from "../documents/NoCategory";
import { SharingControl, sharingWords } from "../documents/SharingControl";
import { formatBytes, formatDateTime, formatWords, statusWords, type DocumentStatus } from "../documents/format";
import { MarkdownText } from "../markdown/MarkdownText";
import "../documents/status.css";
import "./DocumentPage.css";

const CHUNKS_PER_PAGE = 50;
const POLL_INTERVAL_MS = 2000;


interface DocumentViewData {
  document: {
    id: string;
    fileName: string;
    mediaType: string;
    format: string;
    category: string | null;
    owner: { id: string; name: string };
    sharedWithTeamId: string | null;
    sharedWithTeam: { id: string; name: string } | null;
    viewerIsOwner: boolean;
    sizeBytes: number;
    status: DocumentStatus;
    failureReason: string | null;
    progress: { indexedChunks: number; totalChunks: number };
    usageCount: number;
    createdAt: string;
    updatedAt: string;
    chunks: {
      nodes: { id: string; index: number; text: string; headingPath: string[]; page: number | null }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  } | null;
}

interface DocumentViewVariables {
  id: string;
  first: number;
  after?: string | null;
}

const DOCUMENT_VIEW = gql`
  query DocumentView($id: ID!, $first: Int!, $after: String) {
    document(id: $id) {
      id
      fileName
      mediaType
      format
      category
      owner {
        id
        name
      }
      sharedWithTeamId
      sharedWithTeam {
        id
        name
      }
      viewerIsOwner
      sizeBytes
      status
      failureReason
      progress {
        indexedChunks
        totalChunks
      }
      usageCount
      createdAt
      updatedAt
      chunks(first: $first, after: $after) {
        nodes {
          id
          index
          text
          headingPath
          page
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`;


export default function DocumentPage() {
  const { id = "" } = useParams();
  const [searchParams] = useSearchParams();
  const navigate = useNavigate();
  const targetChunkId = searchParams.get("chunk");
  const terms = useMemo(() => queryTerms(searchParams.get("q")), [searchParams]);
  const { data, loading, error, fetchMore, refetch, startPolling, stopPolling } = useQuery<DocumentViewData, DocumentViewVariables>(DOCUMENT_VIEW, {
    variables: { id, first: CHUNKS_PER_PAGE },
    errorPolicy: "all",
    notifyOnNetworkStatusChange: false,
  });
  const doc = data?.document ?? null;
  const chunks = doc?.chunks.nodes ?? [];
  const pageInfo = doc?.chunks.pageInfo;
  const indexing = doc !== null && (doc.status === "PENDING" || doc.status === "INDEXING");

  useEffect(() => {
    if (!indexing) return;
    startPolling(POLL_INTERVAL_MS);
    return () => stopPolling();
  }, [indexing, startPolling, stopPolling]);

  const { loadMore, loadingMore, moreError, targetLoaded, searchingForTarget } = useLinkedPages({
    nodes: chunks,
    pageInfo,
    targetId: targetChunkId,
    elementId: (chunkId) => `chunk-${chunkId}`,
    // Only the first page is shown while indexing, so polling cannot drop loaded pages.
    paused: indexing,
    fetchNext: (after) =>
      fetchMore({
        variables: { after },
        // The next page joins the chunks already shown (the cache keeps one list per `after`).
        updateQuery: (previous, { fetchMoreResult }) => {
          if (!previous.document || !fetchMoreResult.document) return previous;
          return {
            document: {
              ...fetchMoreResult.document,
              chunks: { ...fetchMoreResult.document.chunks, nodes: [...previous.document.chunks.nodes, ...fetchMoreResult.document.chunks.nodes] },
            },
          };
        },
      }),
  });

  useEffect(() => {
    document.title = doc ? `${doc.fileName} · Context search` : "Document · Context search";
  }, [doc?.fileName]);

  if (loading && !data) return <p role="status">Loading the document…</p>;
  if (!doc) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">{error ? "The document could not be loaded" : "Document not found"}</h1>
        {error ? (
          <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} />
        ) : (
          <p>There is no such document that you may see: it may have been deleted, or it is neither yours nor shared with one of your teams.</p>
        )}
        <p>
          <Link to="/documents">Go to your documents</Link>
        </p>
      </section>
    );
  }

  return (
    <section aria-labelledby="page-title" className="document-view">
      <p className="breadcrumb">
        <Link to="/documents">Documents</Link>
      </p>
      <BackToResults />
      <h1 id="page-title">{doc.fileName}</h1>
      <dl className="document-meta">
        <div>
          <dt>Status</dt>
          <dd>
            <span className={`status status-${doc.status.toLowerCase()}`}>{statusWords(doc.status)}</span>
            {doc.status === "INDEXING" && doc.progress.totalChunks > 0 ? ` (${doc.progress.indexedChunks} of ${doc.progress.totalChunks} chunks)` : null}
          </dd>
        </div>
        <div>
          <dt>Format</dt>
          <dd>
            {formatWords(doc.format)} <span className="hint">({doc.mediaType})</span>
          </dd>
        </div>
        <div>
          <dt>Category</dt>
          <dd>{doc.category ?? <NoCategory />}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{formatBytes(doc.sizeBytes)}</dd>
        </div>
        <div>
          <dt>Owner</dt>
          <dd>
            <PersonName person={doc.owner} />
            {doc.viewerIsOwner ? " (you)" : null}
          </dd>
        </div>
        <div>
          <dt>Sharing</dt>
          <dd>{doc.viewerIsOwner ? sharingWords(doc.sharedWithTeam) : `Shared with your team ${doc.sharedWithTeam?.name ?? ""}`}</dd>
        </div>
        <div>
          <dt>Uploaded</dt>
          <dd>
            <time dateTime={doc.createdAt}>{formatDateTime(doc.createdAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Found by search</dt>
          <dd>{doc.usageCount === 1 ? "once" : `${doc.usageCount.toLocaleString()} times`}</dd>
        </div>
      </dl>
      {doc.viewerIsOwner ? (
        <section aria-label="Manage this document" className="card document-manage">
          <SharingControl document={doc} />
          <p className="manage-actions">
            <DeleteDocumentButton document={doc} label="Delete this document" onDeleted={() => navigate("/documents", { state: { deleted: doc.fileName } })} />
          </p>
        </section>
      ) : null}
      {doc.status === "FAILED" ? (
        <div role="alert" className="error-box">
          <strong>This document could not be indexed</strong>
          <p>{doc.failureReason ?? "No reason was given."}</p>
        </div>
      ) : null}
      {error ? <ErrorMessage error={error} /> : null}

      <h2 id="chunks-title">Passages</h2>
      <p role="status" className="hint">
        {indexing ? "Being indexed: its passages appear when it is ready (this page checks on its own)." : null}
        {!indexing && chunks.length === 0 && doc.status === "READY" ? "This document has no passages." : null}
        {searchingForTarget ? "Loading passages up to the linked one…" : null}
        {targetChunkId && !targetLoaded && !searchingForTarget && !loadingMore && !indexing ? "The linked passage is not in this document (it may have been re-indexed)." : null}
      </p>
      <ol className="chunks" aria-labelledby="chunks-title">
        {chunks.map((chunk) => {
          const isTarget = chunk.id === targetChunkId;
          return (
            <li key={chunk.id}>
              <article
                id={`chunk-${chunk.id}`}
                className={`chunk${isTarget ? " chunk-target" : ""}`}
                tabIndex={isTarget ? -1 : undefined}
                aria-current={isTarget ? "true" : undefined}
                aria-labelledby={`chunk-${chunk.id}-heading`}
              >
                <p className="chunk-heading" id={`chunk-${chunk.id}-heading`}>
                  <span>Passage {chunk.index + 1}</span>
                  {chunk.headingPath.length > 0 ? <span className="chunk-path">{chunk.headingPath.join(" › ")}</span> : null}
                  {chunk.page !== null ? <span>Page {chunk.page}</span> : null}
                  {isTarget ? <span className="chunk-target-badge">Linked passage</span> : null}
                </p>
                <div className="chunk-text">
                  <MarkdownText text={chunk.text} terms={isTarget ? terms : null} headingOffset={2} />
                </div>
              </article>
            </li>
          );
        })}
      </ol>
      {moreError ? <ErrorMessage error={moreError} /> : null}
      {pageInfo?.hasNextPage && !indexing ? (
        <p>
          <button type="button" onClick={() => void loadMore()} disabled={loadingMore}>
            {loadingMore ? "Loading passages…" : `Load more passages (${chunks.length} shown)`}
          </button>
        </p>
      ) : null}
    </section>
  );
}
