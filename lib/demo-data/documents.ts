/**
 * The demo organization's documents: their texts live in documents.json beside this file (one
 * entry per document: owner, team it is shared with or null for a private one, category,
 * whether it belongs to the "Engineering handbook" knowledge base, and its sections), on the
 * same topics as the generated conversations. This module only reads them and renders each one
 * as the file a user would upload: Markdown, or a PDF with a real text layer (drawn with
 * pdf-lib), chosen by the file name's extension.
 */
import fs from "node:fs";
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from "pdf-lib";
import { besideModule } from "../project-files.js";

export interface DemoDocumentSection {
  heading: string;
  paragraphs: string[];
}

export interface DemoDocument {
  fileName: string;
  /** a DEMO_USERS id */
  owner: string;
  /** a DEMO_TEAMS id the owner belongs to, or null for a document only its owner sees */
  sharedWithTeam: string | null;
  category: string;
  /** whether it belongs to the demo's LOCAL knowledge base */
  inHandbook: boolean;
  /** the conversation topic it is about, e.g. "postgres-deadlock" */
  topic: string;
  title: string;
  sections: DemoDocumentSection[];
}

export interface DemoLibrary {
  knowledgeBase: { name: string; description: string; category: string };
  documents: DemoDocument[];
}

export interface RenderedDocument {
  fileName: string;
  mediaType: "text/markdown" | "application/pdf";
  bytes: Uint8Array;
}

const LIBRARY_PATH = besideModule("./documents.json", import.meta.url);

/** Reads documents.json. Every call returns fresh objects, so callers may change them. */
export function loadDemoLibrary(): DemoLibrary {
  return JSON.parse(fs.readFileSync(LIBRARY_PATH, "utf8")) as DemoLibrary;
}

export async function renderDemoDocument(document: DemoDocument): Promise<RenderedDocument> {
  if (document.fileName.endsWith(".md")) {
    return { fileName: document.fileName, mediaType: "text/markdown", bytes: Buffer.from(renderMarkdown(document), "utf8") };
  }
  if (document.fileName.endsWith(".pdf")) {
    return { fileName: document.fileName, mediaType: "application/pdf", bytes: await renderPdf(document) };
  }
  throw new Error(`demo document ${document.fileName}: the file name must end in .md or .pdf, which decides its format`);
}

export function renderMarkdown(document: DemoDocument): string {
  const parts = [`# ${document.title}`];
  for (const section of document.sections) parts.push(`## ${section.heading}`, ...section.paragraphs);
  return `${parts.join("\n\n")}\n`;
}

// Letter-size pages, one-inch margins: what a word processor's "export as PDF" gives.
const PAGE = { width: 612, height: 792, margin: 72 } as const;
const TITLE_SIZE = 18;
const HEADING_SIZE = 14;
const BODY_SIZE = 11;
const LINE_GAP = 1.4;
// Fixed dates keep a document's bytes, and so its content hash, the same on every run.
const PDF_DATE = new Date("2026-10-01T09:00:00Z");

export async function renderPdf(document: DemoDocument): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(document.title);
  pdf.setAuthor(document.owner);
  pdf.setCreationDate(PDF_DATE);
  pdf.setModificationDate(PDF_DATE);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const lineWidth = PAGE.width - 2 * PAGE.margin;

  let page: PDFPage = pdf.addPage([PAGE.width, PAGE.height]);
  let y = PAGE.height - PAGE.margin;
  const write = (text: string, font: PDFFont, size: number, spaceBefore: number) => {
    y -= spaceBefore;
    for (const line of wrap(text, font, size, lineWidth)) {
      if (y - size < PAGE.margin) {
        page = pdf.addPage([PAGE.width, PAGE.height]);
        y = PAGE.height - PAGE.margin;
      }
      y -= size;
      page.drawText(line, { x: PAGE.margin, y, size, font });
      y -= size * (LINE_GAP - 1);
    }
  };

  write(document.title, bold, TITLE_SIZE, 0);
  for (const section of document.sections) {
    write(section.heading, bold, HEADING_SIZE, HEADING_SIZE);
    for (const paragraph of section.paragraphs) write(paragraph, regular, BODY_SIZE, BODY_SIZE * 0.6);
  }
  return pdf.save();
}

/** Greedy word wrap by the font's real widths (a single over-long word gets a line of its own). */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line ? `${line} ${word}` : word;
    if (line && font.widthOfTextAtSize(candidate, size) > width) {
      lines.push(line);
      line = word;
    } else {
      line = candidate;
    }
  }
  if (line) lines.push(line);
  return lines;
}
