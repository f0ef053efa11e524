/**
 * A PDF's Flate streams measured before pdf.js opens the file (see unpacked-budget.ts): pdf.js
 * has no bound on what a stream decodes to, and decodes into typed arrays outside the JS heap.
 *
 * The scan finds each `stream` keyword, reads the filters in the dictionary before it, and
 * inflates the streams that start with FlateDecode (twice for [/FlateDecode /FlateDecode]) under
 * the file's budget. Image streams are skipped: text extraction never decodes them, and a scan
 * of ordinary size may hold a large image. Streams it cannot make sense of (encrypted, another
 * first filter, not deflate data) are left to pdf.js, under the parser's memory and time budget.
 */
import { UnpackedBudget, type DecompressionBounds } from "./unpacked-budget.js";

// A stream's dictionary is searched this far back from its `stream` keyword (its object's start).
const DICTIONARY_LOOKBACK = 64 * 1024;
const FILTER = /\/Filter\s*(?:\/([A-Za-z0-9]+)|\[([^\]]*)\])/;
const IMAGE = /\/Subtype\s*\/Image\b/;

/** Throws `DECOMPRESSION_LIMIT` when the PDF's Flate streams unpack past either bound. */
export function checkPdfStreams(bytes: Uint8Array, fileName: string, bounds: DecompressionBounds): void {
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const budget = new UnpackedBudget(fileName, bytes.length, bounds);
  let from = 0;
  let streamNumber = 0;
  for (;;) {
    const keyword = file.indexOf("stream", from, "latin1");
    if (keyword < 0) return;
    from = keyword + 6;
    if (keyword >= 3 && file.toString("latin1", keyword - 3, keyword) === "end") continue;
    let dataStart = keyword + 6;
    if (file[dataStart] === 0x0d) dataStart += 1;
    if (file[dataStart] === 0x0a) dataStart += 1;
    else if (file[dataStart - 1] !== 0x0d) continue;
    const objectStart = file.lastIndexOf(" obj", keyword, "latin1");
    const dictionary = file.toString("latin1", Math.max(objectStart, keyword - DICTIONARY_LOOKBACK, 0), keyword);
    if (!dictionary.trimEnd().endsWith(">>")) continue;
    const dataEnd = file.indexOf("endstream", dataStart, "latin1");
    const end = dataEnd < 0 ? file.length : dataEnd;
    from = end;
    streamNumber += 1;
    const filters = filtersOf(dictionary);
    if (IMAGE.test(dictionary) || filters[0] !== "Flate") continue;
    let data: Uint8Array | null = file.subarray(dataStart, end);
    for (let layer = 0; data !== null && filters[layer] === "Flate"; layer++) {
      data = budget.inflate(data, "zlib", `stream ${streamNumber}`, end - dataStart);
    }
  }
}

/** The stream's filters in order, with FlateDecode (or its abbreviation Fl) as "Flate". */
function filtersOf(dictionary: string): string[] {
  const match = FILTER.exec(dictionary);
  if (!match) return [];
  const names = match[1] !== undefined ? [match[1]] : [...match[2]!.matchAll(/\/([A-Za-z0-9]+)/g)].map((name) => name[1]!);
  return names.map((name) => (name === "FlateDecode" || name === "Fl" ? "Flate" : name));
}
