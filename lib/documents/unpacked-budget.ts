/**
 * What a file's compressed parts unpack to, counted against one budget per file before any
 * parser inflates them: a DOCX's XML entries (docx-text.ts) and a PDF's Flate streams
 * (pdf-streams.ts). Parsers believe the sizes a file declares, or none at all, and inflate
 * outside the JS heap (Buffers, typed arrays), where the thread's heap limit does not see them:
 * a 1 MB PDF whose page is one Flate stream of a gigabyte of zeros held a parser for 60 s at
 * 1.97 GB of memory. zlib's own output bound stops each part here whatever it claims.
 *
 * Two bounds, both `DECOMPRESSION_LIMIT`:
 * - the total unpacked bytes of the file (`maxUnpackedBytes`);
 * - the ratio of any part that unpacks past 1 MB (`maxCompressionRatio`): real XML and page
 *   content compress 3 to 20-fold, a bomb a thousandfold, and a part of many tiny paragraphs at
 *   300-fold took mammoth over a minute.
 *
 * Inflated with fflate (pure JavaScript), never node:zlib: this runs in the parser thread, which
 * is terminated when its CPU budget runs out, and terminating a thread between the creation of a
 * native zlib handle and its initialisation aborts the whole process (Node 20 and 24: `Assertion
 * failed: init_done_ && "close before init"` in node_zlib.cc while the thread's environment is
 * freed). A hostile file that keeps the parser inflating until its budget ends would take the
 * server down with it. A JavaScript inflater has no native handle to leave half made.
 */
import { Inflate, Unzlib } from "fflate";
import { DocumentError, formatBytes, quote } from "./document-error.js";

export interface DecompressionBounds {
  /** Most bytes all of a file's compressed parts may unpack to, together. */
  maxUnpackedBytes: number;
  /** Most times its compressed size a part may unpack to, once it passes {@link RATIO_FREE_BYTES}. */
  maxCompressionRatio: number;
}

/** A part may unpack to this much whatever its ratio (a small styles.xml of repeated tags compresses 100-fold and more). */
export const RATIO_FREE_BYTES = 1024 * 1024;

/** Compressed bytes inflated between two checks of the output against the limit. */
const INPUT_SLICE_BYTES = 16 * 1024;

export class UnpackedBudget {
  private unpacked = 0;

  constructor(
    private readonly fileName: string,
    private readonly fileBytes: number,
    private readonly bounds: DecompressionBounds,
  ) {}

  /** Counts a part stored without compression. */
  countStored(size: number): void {
    this.unpacked += size;
    if (this.unpacked > this.bounds.maxUnpackedBytes) throw this.tooLarge();
  }

  /**
   * `data` inflated (zlib-wrapped for PDF streams, raw deflate for ZIP entries) and counted,
   * or null when it is not deflate data at all (the parser will say what is wrong with it).
   * `compressedSize` is the part's size in the file, when `data` is itself an unpacked layer.
   */
  inflate(data: Uint8Array, format: "zlib" | "raw", part: string, compressedSize = data.length): Buffer | null {
    const byTotal = this.bounds.maxUnpackedBytes - this.unpacked;
    const byRatio = Math.max(RATIO_FREE_BYTES, compressedSize * this.bounds.maxCompressionRatio);
    const limit = Math.max(1, Math.min(byTotal, byRatio));
    const chunks: Uint8Array[] = [];
    let length = 0;
    const inflater = format === "zlib" ? new Unzlib() : new Inflate();
    inflater.ondata = (chunk) => {
      chunks.push(chunk);
      length += chunk.length;
    };
    try {
      // Fed a slice at a time, so that no more than a slice's worth (deflate unpacks at most
      // ~1,032-fold) is inflated past the limit before it is noticed.
      for (let offset = 0; offset < data.length; offset += INPUT_SLICE_BYTES) {
        inflater.push(data.subarray(offset, offset + INPUT_SLICE_BYTES), false);
        if (length > limit) throw byRatio < byTotal ? this.tooCompressed(part, compressedSize, limit) : this.tooLarge();
      }
      inflater.push(new Uint8Array(0), true);
    } catch (error) {
      if (error instanceof DocumentError) throw error;
      // PDF readers tolerate a truncated or padded stream: what inflated before the end counts.
      // A ZIP entry must be whole, and data that never inflated is not deflate data at all (the
      // parser will say what is wrong with it).
      if (format === "raw" || length === 0) return null;
    }
    if (length > limit) throw byRatio < byTotal ? this.tooCompressed(part, compressedSize, limit) : this.tooLarge();
    this.unpacked += length;
    if (this.unpacked > this.bounds.maxUnpackedBytes) throw this.tooLarge();
    return Buffer.concat(chunks, length);
  }

  private tooLarge(): DocumentError {
    return new DocumentError(
      "DECOMPRESSION_LIMIT",
      `${quote(this.fileName)} decompresses to more than ${formatBytes(this.bounds.maxUnpackedBytes)} (from ${formatBytes(this.fileBytes)}), more than is read from one file. Split it into smaller documents.`,
    );
  }

  private tooCompressed(part: string, compressedSize: number, limit: number): DocumentError {
    return new DocumentError(
      "DECOMPRESSION_LIMIT",
      `${quote(this.fileName)} decompresses more than ${this.bounds.maxCompressionRatio}-fold (${part.slice(0, 80)}: ${formatBytes(compressedSize)} to more than ${formatBytes(limit)}), which real documents never do. Save or export it again and re-upload it.`,
    );
  }
}
