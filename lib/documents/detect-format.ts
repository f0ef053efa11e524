/**
 * Which kind of document a file is. The bytes decide first: a PDF starts with `%PDF-` (within
 * its first kilobyte, as readers allow), a DOCX is a ZIP archive holding `word/document.xml`.
 * Only when the bytes say nothing (plain text has no signature) do the file name's extension
 * and the declared media type decide, and they can only choose between text and Markdown or
 * claim a format the bytes then fail to be (`CORRUPT_FILE`). Well-known binary signatures
 * (images, archives, old Word files) are refused by name rather than decoded as text.
 */
import { DocumentError, quote } from "./document-error.js";

export type DocumentFormat = "text" | "markdown" | "pdf" | "docx";

export interface FileDescription {
  fileName: string;
  mediaType?: string;
}

const EXTENSIONS: Record<string, DocumentFormat> = {
  txt: "text",
  text: "text",
  md: "markdown",
  markdown: "markdown",
  pdf: "pdf",
  docx: "docx",
};

const MEDIA_TYPES: Record<string, DocumentFormat> = {
  "text/plain": "text",
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "application/pdf": "pdf",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
};

const SUPPORTED = "plain text (.txt), Markdown (.md), PDF (.pdf) or Word (.docx)";

// Signatures of files people upload by mistake, with what to do instead.
const BINARY_SIGNATURES: { bytes: number[]; what: string }[] = [
  { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], what: "an old Office file (.doc, .xls or .ppt): save it as .docx" },
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: "a PNG image" },
  { bytes: [0xff, 0xd8, 0xff], what: "a JPEG image" },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: "a GIF image" },
  { bytes: [0x1f, 0x8b], what: "a gzip archive" },
  { bytes: [0x7b, 0x5c, 0x72, 0x74, 0x66], what: "an RTF file: save it as .docx" },
];

/** The format of a file, or a `DocumentError` saying why it has none we read. */
export function detectFormat(file: FileDescription, bytes: Uint8Array): DocumentFormat {
  const claimed = claimedFormat(file);
  if (hasPdfSignature(bytes)) return "pdf";
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) {
    const entries = readZipDirectory(bytes, file.fileName);
    if (entries.some((entry) => entry.name === "word/document.xml")) return "docx";
    throw new DocumentError("UNSUPPORTED_TYPE", `${quote(file.fileName)} is a ZIP archive but not a Word document (it has no word/document.xml). Upload ${SUPPORTED}.`);
  }
  for (const signature of BINARY_SIGNATURES) {
    if (startsWith(bytes, signature.bytes)) throw new DocumentError("UNSUPPORTED_TYPE", `${quote(file.fileName)} is ${signature.what}. Upload ${SUPPORTED}.`);
  }
  if (claimed === "pdf") throw new DocumentError("CORRUPT_FILE", `${quote(file.fileName)} is named as a PDF but is not one (it does not start with %PDF-). Export it to PDF again, or upload it under its real type.`);
  if (claimed === "docx") throw new DocumentError("CORRUPT_FILE", `${quote(file.fileName)} is named as a Word document but is not one (a .docx is a ZIP archive). Save it as .docx again, or upload it under its real type.`);
  if (claimed) return claimed;
  throw new DocumentError("UNSUPPORTED_TYPE", `${quote(file.fileName)} has a type we cannot read${file.mediaType ? ` (${file.mediaType})` : ""}. Upload ${SUPPORTED}.`);
}

/** What the name and media type say; the extension wins over a generic or missing media type. */
function claimedFormat(file: FileDescription): DocumentFormat | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(file.fileName)?.[1]?.toLowerCase();
  const byExtension = extension ? EXTENSIONS[extension] : undefined;
  const mediaType = file.mediaType?.split(";")[0]?.trim().toLowerCase();
  const byMediaType = mediaType ? MEDIA_TYPES[mediaType] : undefined;
  return byExtension ?? byMediaType;
}

function hasPdfSignature(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 1024);
  for (let i = 0; i + 5 <= head.length; i++) {
    if (head[i] === 0x25 && head[i + 1] === 0x50 && head[i + 2] === 0x44 && head[i + 3] === 0x46 && head[i + 4] === 0x2d) return true;
  }
  return false;
}

function startsWith(bytes: Uint8Array, signature: readonly number[]): boolean {
  return signature.every((byte, index) => bytes[index] === byte);
}

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated (the only two a DOCX uses). */
  method: number;
  compressedSize: number;
  /** As the archive declares it: a hostile archive may lie, so unpacking checks it again. */
  declaredSize: number;
  /** Where the entry's compressed bytes start. */
  dataOffset: number;
}

/**
 * The entries of a ZIP archive from its central directory (what every unzipper, mammoth's
 * included, reads). Throws `CORRUPT_FILE` on anything truncated or inconsistent. ZIP64 is refused:
 * a document under the upload limit never needs it.
 */
export function readZipDirectory(bytes: Uint8Array, fileName: string): ZipEntry[] {
  const corrupt = (why: string) => new DocumentError("CORRUPT_FILE", `${quote(fileName)} is a damaged ZIP archive (${why}). Save the document again and re-upload it.`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end-of-central-directory record is 22 bytes plus a comment of at most 65,535.
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw corrupt("no end of central directory: the file is probably truncated");
  const count = view.getUint16(end + 10, true);
  const directorySize = view.getUint32(end + 12, true);
  const directoryOffset = view.getUint32(end + 16, true);
  if (count === 0xffff || directoryOffset === 0xffffffff) throw corrupt("ZIP64 archives are not supported");
  if (directoryOffset + directorySize > end) throw corrupt("the central directory lies outside the file");
  const entries: ZipEntry[] = [];
  let at = directoryOffset;
  for (let index = 0; index < count; index++) {
    if (at + 46 > end || view.getUint32(at, true) !== 0x02014b50) throw corrupt(`entry ${index + 1} of ${count} is missing`);
    const method = view.getUint16(at + 10, true);
    const compressedSize = view.getUint32(at + 20, true);
    const declaredSize = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const localOffset = view.getUint32(at + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    if (localOffset + 30 > bytes.length || view.getUint32(localOffset, true) !== 0x04034b50) throw corrupt(`the data of ${name} is missing`);
    const dataOffset = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
    if (dataOffset + compressedSize > bytes.length) throw corrupt(`the data of ${name} is cut short`);
    entries.push({ name, method, compressedSize, declaredSize, dataOffset });
  }
  return entries;
}
