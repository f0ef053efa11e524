/**
 * Documents generated for the extraction and chunking tests (no binary fixtures in the tree):
 * PDFs with pdf-lib, DOCX with docx, and raw ZIP archives for the hostile cases.
 */
import { constants, crc32, deflateRawSync } from "node:zlib";
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from "docx";
import { PDFDocument, PDFHexString, StandardFonts, rgb } from "pdf-lib";

/** A PDF with one page per entry, each entry's lines drawn top to bottom. */
export async function pdfWithPages(pages: readonly (readonly string[])[]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = document.addPage([612, 792]);
    lines.forEach((line, index) => page.drawText(line, { x: 50, y: 740 - index * 16, size: 12, font }));
  }
  return document.save();
}

/** A PDF whose pages carry only a drawn rectangle: what a scan looks like to a text extractor. */
export async function pdfWithoutText(pageCount = 2): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  for (let i = 0; i < pageCount; i++) document.addPage([612, 792]).drawRectangle({ x: 50, y: 50, width: 300, height: 200, color: rgb(0.2, 0.4, 0.8) });
  return document.save();
}

/**
 * A PDF that needs a password. pdf-lib cannot encrypt, so this adds a Standard security handler
 * dictionary (RC4, revision 2) whose check value matches no password: every reader asks for one.
 */
export async function passwordProtectedPdf(): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage().drawText("Confidential", { x: 50, y: 700, size: 12, font });
  const encrypt = document.context.obj({ Filter: "Standard", V: 1, R: 2, Length: 40, P: -4, O: PDFHexString.of("11".repeat(32)), U: PDFHexString.of("22".repeat(32)) });
  document.context.trailerInfo.Encrypt = document.context.register(encrypt);
  document.context.trailerInfo.ID = document.context.obj([PDFHexString.of("33".repeat(16)), PDFHexString.of("33".repeat(16))]);
  return document.save({ useObjectStreams: false });
}

/** A Word document with two heading levels, paragraphs and a table. */
export async function docxGuide(): Promise<Uint8Array> {
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: "Install", heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun("Download the package. "), new TextRun({ text: "Then run it.", bold: true })] }),
          new Paragraph({ text: "On Linux", heading: HeadingLevel.HEADING_2 }),
          new Paragraph("Use apt to install it & check the version."),
          new Table({
            rows: [
              new TableRow({ children: [new TableCell({ children: [new Paragraph("Distribution")] }), new TableCell({ children: [new Paragraph("Command")] })] }),
              new TableRow({ children: [new TableCell({ children: [new Paragraph("Debian")] }), new TableCell({ children: [new Paragraph("apt install tool")] })] }),
            ],
          }),
          new Paragraph({ text: "Configure", heading: HeadingLevel.HEADING_1 }),
          new Paragraph("Edit the settings file."),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(document));
}

/**
 * A ZIP archive written by hand, so tests control every byte: entries deflated (or stored), and
 * optionally a declared uncompressed size that lies, as a zip bomb's would.
 */
export function zipArchive(entries: readonly { name: string; data: Uint8Array | string; store?: boolean; declaredSize?: number }[]): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = typeof entry.data === "string" ? Buffer.from(entry.data, "utf8") : Buffer.from(entry.data);
    const packed = entry.store ? raw : deflateRawSync(raw);
    const name = Buffer.from(entry.name, "utf8");
    const crc = crc32(raw);
    const size = entry.declaredSize ?? raw.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.store ? 0 : 8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(entry.store ? 0 : 8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** A minimal DOCX whose document.xml is `bodyXml` inside a body, padded with `paddingBytes` of whitespace. */
export function handmadeDocx(bodyXml: string, options: { paddingBytes?: number; declaredSize?: number } = {}): Uint8Array {
  const head = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${bodyXml}`;
  const tail = `</w:body></w:document>`;
  const document = Buffer.concat([Buffer.from(head), Buffer.alloc(options.paddingBytes ?? 0, 0x20), Buffer.from(tail)]);
  return zipArchive([
    { name: "[Content_Types].xml", data: CONTENT_TYPES },
    { name: "_rels/.rels", data: ROOT_RELS },
    { name: "word/document.xml", data: document, ...(options.declaredSize !== undefined ? { declaredSize: options.declaredSize } : {}) },
  ]);
}

/**
 * A PDF of one page whose content stream is a Flate "bomb": `decodedMegabytes` MB of zeros in
 * about a thousandth of that. Built from one deflated megabyte repeated (sync-flushed deflate
 * blocks concatenate), so the test never holds the decoded stream itself.
 */
export function flateBombPdf(decodedMegabytes: number): Uint8Array {
  const megabyte = deflateRawSync(Buffer.alloc(1024 * 1024), { finishFlush: constants.Z_SYNC_FLUSH });
  const decoded = decodedMegabytes * 1024 * 1024;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((decoded % 65_521) << 16) | 1) >>> 0);
  // zlib header, the blocks, an empty final block, the Adler-32 of the zeros.
  const stream = Buffer.concat([Buffer.from([0x78, 0x9c]), ...Array.from({ length: decodedMegabytes }, () => megabyte), Buffer.from([0x03, 0x00]), adler]);
  return handmadePdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from("\nendstream")]),
  ]);
}

/** A PDF of the given objects (numbered from 1, the first the catalog) with a correct cross-reference table. */
function handmadePdf(objects: readonly (string | Buffer)[]): Uint8Array {
  const parts: Buffer[] = [Buffer.from("%PDF-1.7\n")];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    const part = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), Buffer.from(body), Buffer.from("\nendobj\n")]);
    offsets.push(length);
    parts.push(part);
    length += part.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`)].join("");
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return new Uint8Array(Buffer.concat(parts));
}

/** A DOCX of `paragraphs` one-word paragraphs: about 37 bytes of XML each, deflating about 340-fold. */
export function manyParagraphsDocx(paragraphs: number): Uint8Array {
  return handmadeDocx("<w:p><w:r><w:t>word</w:t></w:r></w:p>".repeat(paragraphs));
}
