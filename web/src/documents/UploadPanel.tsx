/**
 * Uploading documents: a drop zone that is also a labelled file input (keyboard and screen
 * reader users choose files with it; everyone else may drop them on the zone), an optional
 * category, and one row per file with its progress bar, then its document's status (as the
 * documents list reports it, live) or the server's error in words and code. An upload whose bytes
 * were already here says so and offers to replace the earlier copy (DuplicateNotice).
 */
import { useEffect, useId, useRef, useState, type DragEvent } from "react";
import { Link } from "react-router";
import { formatBytes, statusWords } from "./format";
import { DuplicateNotice } from "./DuplicateNotice";
import { UploadError } from "./UploadError";
import { uploadDocumentFile, type UploadedDocument } from "./upload";

/**
 * Files sent at once; the others wait their turn in order. The gateway admits a few uploads per
 * user in flight (gateway/upload-admission.ts, 4) and answers more with OVERLOADED: three leave
 * room for another tab, and dropping twenty files still uploads all twenty.
 */
export const UPLOADS_AT_ONCE = 3;

/** What the knowledge base reads; a hint for the file chooser only, the server decides. */
const ACCEPTED = ".md,.markdown,.txt,.text,.pdf,.docx,text/markdown,text/plain,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document";

interface FileUpload {
  key: number;
  fileName: string;
  sizeBytes: number;
  loaded: number;
  total: number;
  state: "waiting" | "uploading" | "uploaded" | "failed";
  document?: UploadedDocument;
  error?: unknown;
}

export interface UploadPanelProps {
  /** Called when a document was stored (the page refreshes its list and polls its status). */
  onUploaded(document: UploadedDocument): void;
  /** The latest status the page knows for a document id (its list is polled), if it knows it. */
  statusOf(documentId: string): string | undefined;
  /** Called when a duplicate's notice deleted a copy (the page refreshes its list). */
  onDocumentsChanged(): void;
  /** The file input's id, so the page's empty state can open the file chooser. */
  fileInputId: string;
}

export function UploadPanel({ onUploaded, statusOf, onDocumentsChanged, fileInputId: inputId }: UploadPanelProps) {
  const categoryId = useId();
  const [uploads, setUploads] = useState<FileUpload[]>([]);
  const [category, setCategory] = useState("");
  const [dragging, setDragging] = useState(false);
  const nextKey = useRef(0);
  /** Files chosen but not sent yet, oldest first, and how many are being sent. */
  const waiting = useRef<{ key: number; file: File; category: string }[]>([]);
  const sending = useRef(0);

  // A file dropped beside the zone would make the browser open it, leaving the page and its
  // uploads in progress: files dropped anywhere else on the page are ignored instead.
  useEffect(() => {
    const ignoreFiles = (event: globalThis.DragEvent) => {
      if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
    };
    window.addEventListener("dragover", ignoreFiles);
    window.addEventListener("drop", ignoreFiles);
    return () => {
      window.removeEventListener("dragover", ignoreFiles);
      window.removeEventListener("drop", ignoreFiles);
    };
  }, []);

  function update(key: number, change: Partial<FileUpload>) {
    setUploads((current) => current.map((upload) => (upload.key === key ? { ...upload, ...change } : upload)));
  }

  function start(files: FileList | File[]) {
    for (const file of Array.from(files)) {
      const key = nextKey.current++;
      setUploads((current) => [{ key, fileName: file.name, sizeBytes: file.size, loaded: 0, total: file.size, state: "waiting" }, ...current]);
      waiting.current.push({ key, file, category });
    }
    sendWaiting();
  }

  function sendWaiting() {
    while (sending.current < UPLOADS_AT_ONCE && waiting.current.length > 0) {
      const { key, file, category: fileCategory } = waiting.current.shift()!;
      sending.current += 1;
      update(key, { state: "uploading" });
      const request = uploadDocumentFile(file, { category: fileCategory, onProgress: (loaded, total) => update(key, { loaded, total }) });
      void request.promise.then((outcome) => {
        sending.current -= 1;
        if (outcome.ok) {
          update(key, { state: "uploaded", loaded: file.size, document: outcome.document });
          onUploaded(outcome.document);
        } else {
          update(key, { state: "failed", error: outcome.error });
        }
        sendWaiting();
      });
    }
  }

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault();
    setDragging(false);
    if (event.dataTransfer.files.length > 0) start(event.dataTransfer.files);
  }

  return (
    <section aria-labelledby="upload-title" className="upload-panel card">
      <h2 id="upload-title">Upload documents</h2>
      <div
        className={`drop-zone${dragging ? " drop-zone-active" : ""}`}
        data-testid="drop-zone"
        onDragEnter={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragOver={(event) => {
          // Without preventDefault the browser opens the dropped file instead of giving it to us.
          event.preventDefault();
          event.dataTransfer.dropEffect = "copy";
        }}
        onDragLeave={(event) => {
          if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={onDrop}
      >
        <p className="drop-zone-text">Drop Markdown, text, PDF or Word files here, or</p>
        <label htmlFor={inputId} className="file-label">
          Choose files to upload
        </label>
        <input
          id={inputId}
          className="file-input"
          type="file"
          multiple
          accept={ACCEPTED}
          onChange={(event) => {
            if (event.target.files?.length) start(event.target.files);
            // The same file may be chosen again (after fixing it, say).
            event.target.value = "";
          }}
        />
        <p className="hint">Up to 10 MB each by default. Each upload is indexed in the background: its status turns from Pending to Ready below.</p>
      </div>
      <p className="upload-category">
        <label htmlFor={categoryId}>Category for the next uploads (optional)</label>
        <input id={categoryId} type="text" maxLength={100} value={category} onChange={(event) => setCategory(event.target.value)} placeholder="e.g. runbooks" />
      </p>

      {uploads.length > 0 ? (
        <ul className="upload-list" aria-label="Uploads">
          {uploads.map((upload) => (
            <UploadRow key={upload.key} upload={upload} status={upload.document ? (statusOf(upload.document.id) ?? upload.document.status) : undefined} onDocumentsChanged={onDocumentsChanged} />
          ))}
        </ul>
      ) : null}
    </section>
  );
}


function UploadRow({ upload, status, onDocumentsChanged }: { upload: FileUpload; status: string | undefined; onDocumentsChanged(): void }) {
  const progressId = useId();
  const percent = upload.total > 0 ? Math.round((upload.loaded / upload.total) * 100) : 0;
  return (
    <li className={`upload upload-${upload.state}`} data-file-name={upload.fileName}>
      <p className="upload-name">
        <strong>{upload.fileName}</strong> <span className="hint">{formatBytes(upload.sizeBytes)}</span>
      </p>
      {upload.state === "waiting" ? <p className="upload-progress hint">Waiting to upload (up to {UPLOADS_AT_ONCE} files are sent at once)</p> : null}
      {upload.state === "uploading" ? (
        <p className="upload-progress">
          <label htmlFor={progressId}>Uploading {upload.fileName}</label>
          <progress id={progressId} max={upload.total || 1} value={upload.loaded}>
            {percent}%
          </progress>
          <span aria-hidden="true">{percent}%</span>
        </p>
      ) : null}
      {/* Announced as it changes: uploaded, then the document's status as indexing goes on. */}
      <p role="status" className="upload-result">
        {upload.state === "uploaded" && upload.document ? (
          <>
            Uploaded. Status: <span className={`status status-${(status ?? "").toLowerCase()}`}>{status ? statusWords(status) : null}</span>{" "}
            <Link to={`/documents/${upload.document.id}`}>Open {upload.document.fileName}</Link>
          </>
        ) : null}
      </p>
      {upload.state === "uploaded" && upload.document ? <DuplicateNotice upload={upload.document} onChanged={onDocumentsChanged} /> : null}
      {upload.state === "failed" ? <UploadError error={upload.error} /> : null}
    </li>
  );
}
