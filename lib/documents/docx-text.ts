/**
 * The text of a Word document (.docx) with its headings, through mammoth (which maps Word's
 * heading styles to `<h1>`–`<h6>`). Mammoth's HTML is used rather than its Markdown writer,
 * which escapes punctuation (`1\.`, `\(`) into the text; its HTML is regular enough (only the
 * tags it writes, entities escaped) to read with a small tokenizer. Paragraphs become
 * paragraphs, list items one paragraph each, a table one paragraph with a line per row and
 * ` | ` between cells. Images are skipped without being read, and linked external files are
 * never opened.
 *
 * A DOCX is a ZIP archive, and mammoth unpacks what it reads whole into memory, believing the
 * sizes the archive declares. So before mammoth sees it, every XML part is unpacked here with
 * zlib's own output bound, whatever it declares: a "zip bomb" stops at the unpacked-size or
 * compression-ratio bound (unpacked-budget.ts).
 */
import mammoth from "mammoth";
import { DocumentError, quote } from "./document-error.js";
import { readZipDirectory } from "./detect-format.js";
import { normalizeText, sectionsFromHeadings, type DocumentSection } from "./normalize-text.js";
import { tooMuchText } from "./pdf-text.js";
import { UnpackedBudget, type DecompressionBounds } from "./unpacked-budget.js";

export interface DocxText {
  text: string;
  sections: DocumentSection[];
}

export async function extractDocxText(bytes: Uint8Array, fileName: string, limits: { maxChars: number } & DecompressionBounds): Promise<DocxText> {
  checkUnpackedSize(bytes, fileName, limits);
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      { convertImage: mammoth.images.imgElement(async () => ({ src: "" })), externalFileAccess: false, ignoreEmptyParagraphs: true },
    );
    html = result.value;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new DocumentError("CORRUPT_FILE", `${quote(fileName)} is not a readable Word document (${message.slice(0, 200)}). Save it as .docx again and re-upload it.`);
  }
  return textOfHtml(html, fileName, limits.maxChars);
}

function checkUnpackedSize(bytes: Uint8Array, fileName: string, bounds: DecompressionBounds): void {
  const budget = new UnpackedBudget(fileName, bytes.length, bounds);
  for (const entry of readZipDirectory(bytes, fileName)) {
    // Media are never read (images are skipped), so only the parts mammoth parses count.
    if (!/\.(xml|rels)$/i.test(entry.name)) continue;
    const data = bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
    if (entry.method === 0) budget.countStored(data.length);
    else if (entry.method === 8) {
      if (budget.inflate(data, "raw", entry.name) === null) {
        throw new DocumentError("CORRUPT_FILE", `${quote(fileName)} is damaged: ${entry.name} cannot be unpacked. Save it as .docx again and re-upload it.`);
      }
    } else throw new DocumentError("CORRUPT_FILE", `${quote(fileName)} uses a compression method Word does not write (${entry.method} in ${entry.name}). Save it as .docx again.`);
  }
}

const TAG_OR_TEXT = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*>|([^<]+)/g;
const HEADING = /^h([1-6])$/;

function textOfHtml(html: string, fileName: string, maxChars: number): DocxText {
  const blocks: { text: string; headingLevel?: number }[] = [];
  let inline = "";
  let tableDepth = 0;
  let cell = "";
  let row: string[] = [];
  let tableRows: string[] = [];
  let headingLevel: number | undefined;
  let length = 0;
  const flushInline = () => {
    const text = inline.replace(/\s+/g, " ").trim();
    inline = "";
    if (text.length === 0) return;
    if (tableDepth > 0) cell += (cell.length > 0 ? " " : "") + text;
    else {
      blocks.push({ text, headingLevel });
      length += text.length + 2;
      if (length > maxChars) throw tooMuchText(fileName, maxChars, "in its body");
    }
  };
  for (const match of html.matchAll(TAG_OR_TEXT)) {
    if (match[3] !== undefined) {
      inline += decodeEntities(match[3]);
      continue;
    }
    const closing = match[1] === "/";
    const tag = match[2]!.toLowerCase();
    const level = HEADING.exec(tag);
    if (level) {
      flushInline();
      headingLevel = closing ? undefined : Number(level[1]);
    } else if (tag === "p" || tag === "li") flushInline();
    else if (tag === "br") inline += " ";
    else if (tag === "table") {
      flushInline();
      if (!closing) tableDepth += 1;
      else if (tableDepth > 0) {
        tableDepth -= 1;
        if (tableDepth === 0 && tableRows.length > 0) {
          blocks.push({ text: tableRows.join("\n") });
          length += blocks[blocks.length - 1]!.text.length + 2;
          if (length > maxChars) throw tooMuchText(fileName, maxChars, "in a table");
          tableRows = [];
        }
      }
    } else if (tableDepth === 1 && (tag === "td" || tag === "th") && closing) {
      flushInline();
      row.push(cell);
      cell = "";
    } else if (tableDepth === 1 && tag === "tr" && closing) {
      if (row.some((value) => value.length > 0)) tableRows.push(row.join(" | "));
      row = [];
    }
  }
  flushInline();

  // Normalize each block on its own, so that offsets computed here stay true in the joined text.
  let text = "";
  const headings: { level: number; title: string; start: number }[] = [];
  for (const block of blocks) {
    const normalized = normalizeText(block.text);
    if (normalized.length === 0) continue;
    if (text.length > 0) text += "\n\n";
    if (block.headingLevel !== undefined) headings.push({ level: block.headingLevel, title: normalized.replace(/\s+/g, " "), start: text.length });
    text += normalized;
  }
  return { text, sections: sectionsFromHeadings(headings, text.length) };
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos|#39);/g, (entity, body: string) => {
    if (body === "amp") return "&";
    if (body === "lt") return "<";
    if (body === "gt") return ">";
    if (body === "quot") return '"';
    if (body === "apos" || body === "#39") return "'";
    const code = body.startsWith("#x") ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
    return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}
