/**
 * The text layer of a PDF, page by page, with pdf.js (`pdfjs-dist`, Mozilla's maintained reader).
 *
 * In Node, pdf.js runs its parser in a "fake worker": the legacy build imports its own
 * `pdf.worker.mjs` into the calling thread, which is already a worker thread of ours, so nothing
 * else starts and nothing touches the network (font data is never fetched: `disableFontFace`,
 * no `standardFontDataUrl`, and text extraction needs no glyph outlines). No canvas either: we
 * never render. The legacy build carries the polyfills Node 20 lacks.
 *
 * pdf.js detaches the buffer it is given, so it gets a copy. It also decodes streams without a
 * bound, so what they unpack to is measured first (pdf-streams.ts).
 */
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import { DocumentError, quote } from "./document-error.js";
import { hasReadableText, normalizeText, type DocumentSection } from "./normalize-text.js";
import { checkPdfStreams } from "./pdf-streams.js";
import type { DecompressionBounds } from "./unpacked-budget.js";

export interface DocumentPage {
  /** 1-based, as readers number pages. */
  pageNumber: number;
  /** Character offsets of the page's text in the document's text, `[start, end)`. */
  start: number;
  end: number;
}

export interface PdfText {
  text: string;
  sections: DocumentSection[];
  pages: DocumentPage[];
}

interface TextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

export async function extractPdfText(bytes: Uint8Array, fileName: string, limits: { maxPages: number; maxChars: number } & DecompressionBounds): Promise<PdfText> {
  checkPdfStreams(bytes, fileName, limits);
  let document: pdfjs.PDFDocumentProxy;
  try {
    document = await pdfjs.getDocument({
      data: bytes.slice(),
      disableFontFace: true,
      isEvalSupported: false,
      useSystemFonts: false,
      useWorkerFetch: false,
      stopAtErrors: false,
      verbosity: 0,
    }).promise;
  } catch (error) {
    throw openingError(error, fileName);
  }
  try {
    if (document.numPages > limits.maxPages) {
      throw new DocumentError("TOO_MANY_PAGES", `${quote(fileName)} has ${document.numPages.toLocaleString("en")} pages; at most ${limits.maxPages.toLocaleString("en")} are accepted. Split it into smaller files.`);
    }
    const pages: DocumentPage[] = [];
    let text = "";
    for (let pageNumber = 1; pageNumber <= document.numPages; pageNumber++) {
      const pageText = await readPage(document, pageNumber, fileName);
      if (pageText.length > 0) text += text.length > 0 ? "\n\n" : "";
      const start = text.length;
      text += pageText;
      pages.push({ pageNumber, start, end: text.length });
      if (text.length > limits.maxChars) throw tooMuchText(fileName, limits.maxChars, `by page ${pageNumber} of ${document.numPages}`);
    }
    if (!hasReadableText(text)) {
      throw new DocumentError("NO_TEXT_LAYER", `${quote(fileName)} has ${document.numPages} page(s) but no text on them: it is probably scanned images. Run it through OCR (for example "Save as searchable PDF") and upload it again.`);
    }
    return { text, pages, sections: [{ headingPath: [], start: 0, end: text.length }] };
  } finally {
    await document.destroy();
  }
}

/**
 * One page's text: items joined as pdf.js lays them out (it marks line ends), a line gap
 * clearly wider than the text height starts a new paragraph, so chunking can keep paragraphs.
 */
async function readPage(document: pdfjs.PDFDocumentProxy, pageNumber: number, fileName: string): Promise<string> {
  let content: { items: unknown[] };
  try {
    const page = await document.getPage(pageNumber);
    content = await page.getTextContent();
    page.cleanup();
  } catch (error) {
    throw new DocumentError("CORRUPT_FILE", `${quote(fileName)} is damaged: page ${pageNumber} cannot be read (${reason(error)}). Export it to PDF again and re-upload it.`);
  }
  let text = "";
  let lineY: number | null = null;
  let atLineStart = true;
  for (const raw of content.items) {
    const item = raw as TextItem;
    if (typeof item.str !== "string") continue;
    if (atLineStart && item.str.length > 0) {
      const y = item.transform[5] ?? 0;
      const gap = lineY === null ? 0 : Math.abs(lineY - y);
      if (text.length > 0) text += gap > 1.8 * (item.height || 12) ? "\n\n" : "\n";
      lineY = y;
      atLineStart = false;
    }
    text += item.str;
    if (item.hasEOL) atLineStart = true;
  }
  return normalizeText(text);
}

function openingError(error: unknown, fileName: string): DocumentError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "PasswordException") {
    return new DocumentError("ENCRYPTED_FILE", `${quote(fileName)} is protected by a password. Remove the protection (print or export it to an unprotected PDF) and upload it again.`);
  }
  return new DocumentError("CORRUPT_FILE", `${quote(fileName)} is not a readable PDF (${reason(error)}); it may be truncated or damaged. Export it to PDF again and re-upload it.`);
}

export function tooMuchText(fileName: string, maxChars: number, where: string): DocumentError {
  return new DocumentError("TEXT_TOO_LONG", `${quote(fileName)} has more than ${maxChars.toLocaleString("en")} characters of text (${where}). Split it into smaller files.`);
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 200 ? `${message.slice(0, 197)}...` : message;
}
