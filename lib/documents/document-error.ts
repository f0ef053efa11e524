/**
 * Why a file could not become text, in words its uploader can act on. The code is what a
 * client switches on (it becomes `extensions.code` in GraphQL, and a FAILED document's reason);
 * the message says what was wrong and what to do about it.
 */
export type DocumentErrorCode =
  /** The file has no bytes, or nothing but whitespace and control characters. */
  | "EMPTY_FILE"
  /** More bytes than the upload limit. */
  | "FILE_TOO_LARGE"
  /** Not plain text, Markdown, PDF or DOCX (by its bytes, or by its name when the bytes say nothing). */
  | "UNSUPPORTED_TYPE"
  /** Plain text or Markdown that is not valid UTF-8. */
  | "INVALID_ENCODING"
  /** A PDF or DOCX whose structure cannot be read (truncated, damaged, or only named like one). */
  | "CORRUPT_FILE"
  /** A PDF that needs a password to open. */
  | "ENCRYPTED_FILE"
  /** A PDF with pages but no text on them (scanned images): it would need OCR, which we do not do. */
  | "NO_TEXT_LAYER"
  /** A PDF with more pages than the page limit. */
  | "TOO_MANY_PAGES"
  /** More extracted characters than the text limit. */
  | "TEXT_TOO_LONG"
  /** Compressed parts (DOCX XML, PDF streams) that unpack past the size or compression-ratio bound: a decompression bomb. */
  | "DECOMPRESSION_LIMIT"
  /** Parsing took longer than the time limit; the parser was stopped. */
  | "EXTRACTION_TIMEOUT"
  /** Parsing needed more memory than a parser thread may use; the thread was stopped. */
  | "MEMORY_LIMIT";

export class DocumentError extends Error {
  override readonly name = "DocumentError";
  constructor(
    readonly code: DocumentErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KB`;
  return `${bytes} bytes`;
}

/** A file name as messages show it: quoted, and cut when a hostile client sends a very long one. */
export function quote(fileName: string): string {
  const shown = fileName.length > 80 ? `${fileName.slice(0, 77)}...` : fileName;
  return `"${shown}"`;
}
