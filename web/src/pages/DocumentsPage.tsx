/**
 * The documents the caller may see (their own and their teams'), newest first, 20 a page with
 * Previous and Next, and the upload panel (documents/UploadPanel.tsx: drop zone, file input,
 * progress, the server's errors). Uploads go to the gateway's `POST /documents`
 * (documents/upload.ts), not through Apollo: only XMLHttpRequest reports upload progress.
 *
 * Sends `DocumentsList` (a page of documents with their status and indexing progress). The owner
 * of a document may delete it from its row (DeleteDocumentButton asks first); its sharing is
 * shown here and changed on the document's page. With no documents the page invites the first
 * upload; with the gateway out of reach it says so (ErrorMessage) instead of an empty table.
 *
 * Status goes PENDING → INDEXING → READY (or FAILED) live by polling, not a subscription: the
 * supergraph has no Subscription type (the gateway speaks plain HTTP to its subgraphs), and the
 * page is one cheap query. It polls every 2 s only while a document on the page, or one just
 * uploaded, is not final, and stops once all are READY or FAILED, so an idle page sends nothing.
 */
import { gql } from "@apollo/client";
import { useQuery } from "@apollo/client/react";
import { useCallback, useEffect, useState } from "react";
import { Link, useLocation } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { DeleteDocumentButton } from "../documents/DeleteDocumentButton";
import { NoCategory } from "../documents/NoCategory";
import { sharingWords } from "../documents/SharingControl";
import { formatBytes, formatDateTime, formatWords, statusWords, type DocumentStatus } from "../documents/format";
import { UploadPanel } from "../documents/UploadPanel";
import "../documents/status.css";
import "../documents/manage.css";
import "./DocumentsPage.css";

const DOCUMENTS_PER_PAGE = 20;
const POLL_INTERVAL_MS = 2000;
const FINAL_STATUSES = new Set(["READY", "FAILED"]);


interface DocumentsListData {
  documents: {
    nodes: {
      id: string;
      fileName: string;
      category: string | null;
      sharedWithTeamId: string | null;
      sharedWithTeam: { id: string; name: string } | null;
      viewerIsOwner: boolean;
      format: string;
      status: DocumentStatus;
      failureReason: string | null;
      progress: { indexedChunks: number; totalChunks: number };
      sizeBytes: number;
      createdAt: string;
    }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  } | null;
}

const DOCUMENTS_LIST = gql`
  query DocumentsList($first: Int!, $after: String) {
    documents(first: $first, after: $after) {
      nodes {
        id
        fileName
        category
        sharedWithTeamId
        sharedWithTeam {
          id
          name
        }
        viewerIsOwner
        format
        status
        failureReason
        progress {
          indexedChunks
          totalChunks
        }
        sizeBytes
        createdAt
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`;


export default function DocumentsPage() {
  // The cursors of the pages before this one (Previous pops one); null is the first page.
  const [cursors, setCursors] = useState<(string | null)[]>([]);
  const after = cursors.length > 0 ? cursors[cursors.length - 1]! : null;
  // Uploads whose documents have not reached a final status yet: polled even before the list shows them.
  const [unsettledUploads, setUnsettledUploads] = useState<Set<string>>(() => new Set());

  const { data, loading, error, refetch, startPolling, stopPolling } = useQuery<DocumentsListData, { first: number; after: string | null }>(DOCUMENTS_LIST, {
    variables: { first: DOCUMENTS_PER_PAGE, after },
    errorPolicy: "all",
    notifyOnNetworkStatusChange: false,
  });
  const documents = data?.documents?.nodes ?? [];
  const pageInfo = data?.documents?.pageInfo;

  const statuses = new Map(documents.map((document) => [document.id, document.status]));
  const settledUploads = [...unsettledUploads].filter((id) => FINAL_STATUSES.has(statuses.get(id) ?? ""));
  const polling = documents.some((document) => !FINAL_STATUSES.has(document.status)) || unsettledUploads.size > settledUploads.length;

  useEffect(() => {
    if (settledUploads.length === 0) return;
    setUnsettledUploads((current) => new Set([...current].filter((id) => !settledUploads.includes(id))));
  }, [settledUploads.join(",")]);

  useEffect(() => {
    if (!polling) return;
    startPolling(POLL_INTERVAL_MS);
    return () => stopPolling();
  }, [polling, startPolling, stopPolling]);

  const onUploaded = useCallback(
    (document: { id: string; status: string }) => {
      if (!FINAL_STATUSES.has(document.status)) setUnsettledUploads((current) => new Set(current).add(document.id));
      // A new document is the newest: show the first page, where it is.
      if (cursors.length > 0) setCursors([]);
      else void refetch();
    },
    [cursors.length, refetch],
  );

  // The document page sends here after a delete, naming what it deleted.
  const deletedOnItsPage = (useLocation().state as { deleted?: unknown } | null)?.deleted;
  const [deletedHere, setDeletedHere] = useState<string | null>(null);
  const deleted = deletedHere ?? (typeof deletedOnItsPage === "string" ? deletedOnItsPage : null);

  const onDeleted = useCallback((id: string) => {
    setDeletedHere(documents.find((document) => document.id === id)?.fileName ?? "The document");
    // The last document of a later page: go back a page rather than show an empty one.
    if (documents.length <= 1 && cursors.length > 0) setCursors(cursors.slice(0, -1));
    else void refetch().catch(() => undefined);
  }, [documents, cursors, refetch]);

  useEffect(() => {
    document.title = "Documents · Context search";
  }, []);

  const fileInputId = "document-files";
  const empty = data?.documents != null && documents.length === 0 && cursors.length === 0;

  return (
    <section aria-labelledby="page-title" className="documents-page">
      <h1 id="page-title">Documents</h1>
      <p className="hint">Your documents and those shared with your teams, newest first. Search finds them once they are ready.</p>

      <UploadPanel fileInputId={fileInputId} onUploaded={onUploaded} statusOf={(id) => statuses.get(id)} onDocumentsChanged={() => void refetch().catch(() => undefined)} />

      <h2 id="documents-title">Your documents</h2>
      {error ? <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} /> : null}
      <p role="status" className="hint">
        {loading && !data ? "Loading documents…" : null}
        {deleted ? `Deleted ${deleted}. ` : null}
        {polling ? "Indexing: statuses update on their own." : null}
      </p>
      {empty ? (
        <div className="card empty-state" data-testid="documents-empty">
          <h3>No documents yet</h3>
          <p>Upload Markdown, text, PDF or Word files: search finds their passages once they are indexed, and you can share each with one of your teams.</p>
          <p>
            <button type="button" className="primary" onClick={() => window.document.getElementById(fileInputId)?.click()}>
              Upload your first document
            </button>
          </p>
        </div>
      ) : null}
      {documents.length > 0 ? (
        <div className="table-scroll">
          <table className="documents-table" aria-labelledby="documents-title">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Category</th>
                <th scope="col">Format</th>
                <th scope="col">Status</th>
                <th scope="col" className="number">
                  Size
                </th>
                <th scope="col">Uploaded</th>
                <th scope="col">Shared with</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {documents.map((document) => (
                <tr key={document.id} data-document-id={document.id}>
                  <td>
                    <Link to={`/documents/${document.id}`}>{document.fileName}</Link>
                  </td>
                  <td>{document.category ?? <NoCategory />}</td>
                  <td>{formatWords(document.format)}</td>
                  <td>
                    <span className={`status status-${document.status.toLowerCase()}`}>{statusWords(document.status)}</span>
                    {document.status === "INDEXING" && document.progress.totalChunks > 0 ? (
                      <span className="hint">
                        {" "}
                        {document.progress.indexedChunks} of {document.progress.totalChunks} chunks
                      </span>
                    ) : null}
                    {document.status === "FAILED" && document.failureReason ? <span className="failure-reason">{document.failureReason}</span> : null}
                  </td>
                  <td className="number">{formatBytes(document.sizeBytes)}</td>
                  <td>
                    <time dateTime={document.createdAt}>{formatDateTime(document.createdAt)}</time>
                  </td>
                  <td>{document.viewerIsOwner ? sharingWords(document.sharedWithTeam) : `${document.sharedWithTeam?.name ?? "A team"} (a teammate's)`}</td>
                  <td>{document.viewerIsOwner ? <DeleteDocumentButton document={document} onDeleted={onDeleted} /> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {empty || (!data && error) ? null : (
      <nav aria-label="Documents pages" className="pager">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span className="hint">Page {cursors.length + 1}</span>
        <button type="button" disabled={!pageInfo?.hasNextPage || !pageInfo.endCursor} onClick={() => pageInfo?.endCursor && setCursors([...cursors, pageInfo.endCursor])}>
          Next page
        </button>
      </nav>
      )}
    </section>
  );
}
