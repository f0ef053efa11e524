/** How the document and conversation views show sizes, times, document statuses and formats. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KB`;
  return `${bytes} bytes`;
}

/** Times as every page shows them (one format, web/src/dates.ts). */
export { formatDateTime } from "../dates";

/** A document's status as the knowledge-base subgraph names it. */
export type DocumentStatus = "PENDING" | "INDEXING" | "READY" | "FAILED";

const STATUS_WORDS: Record<string, string> = { PENDING: "Pending", INDEXING: "Indexing", READY: "Ready", FAILED: "Failed" };
const FORMAT_WORDS: Record<string, string> = { TEXT: "Text", MARKDOWN: "Markdown", PDF: "PDF", DOCX: "Word" };

/** The status in words (status.css colours it by `status-<status>`; the word is what is read); an unknown one as it is. */
export function statusWords(status: string): string {
  return STATUS_WORDS[status] ?? status;
}

/** The format in words ("Word", not DOCX). */
export function formatWords(format: string): string {
  return FORMAT_WORDS[format] ?? format;
}
