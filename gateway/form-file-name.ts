/**
 * The uploaded file's name in a multipart/form-data body, read from its part's own
 * Content-Disposition header rather than taken from the runtime's form parser, whose reading
 * differs between Node versions: undici 6 (Node 20) refuses the whole body when a part has an
 * RFC 5987 `filename*=UTF-8''...` parameter, which undici 7 (Node 22, 24) reads.
 *
 * - `filename*=<charset>'<language>'<percent-encoded bytes>` (RFC 5987; RFC 7578 says senders
 *   should not use it, but older clients do): UTF-8 or ISO-8859-1, as the parameter says.
 * - `filename="..."`: the bytes as browsers and curl send them, raw UTF-8 (RFC 7578 §4.2), with
 *   the HTML standard's escapes (%22 for a quote, %0D and %0A) undone; bytes that are not UTF-8
 *   are read as ISO-8859-1, never dropped.
 *
 * The caller then gives the form parser the body with that header rewritten to an ASCII name, so
 * every runtime parses the same body, and takes the name from here. The name is only decoded
 * here; what a name may be (NFC, no control or bidirectional characters) is the
 * knowledge-base subgraph's rule (lib/documents/file-name.ts), which every upload goes through.
 */

/** Header blocks longer than this are not searched (a part's headers are a few hundred bytes). */
const MAX_HEADER_BYTES = 16 * 1024;

export interface FormFile {
  /** The decoded file name, or null when the part has none. */
  fileName: string | null;
  /** The body with the part's Content-Disposition naming the file `upload` in ASCII. */
  body: Buffer;
}

/** The part named `field` in `body`, or null when the body has none (the form parser will say what is wrong). */
export function formFile(body: Buffer, contentType: string, field: string): FormFile | null {
  const boundary = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  if (!boundary) return null;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`, "latin1");
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const headersStart = at + delimiter.length + 2;
    if (body.toString("latin1", at + delimiter.length, headersStart) !== "\r\n") return null;
    const headersEnd = body.indexOf("\r\n\r\n", headersStart);
    if (headersEnd < 0 || headersEnd - headersStart > MAX_HEADER_BYTES) return null;
    const headers = body.toString("latin1", headersStart, headersEnd).split("\r\n");
    const index = headers.findIndex((line) => /^content-disposition\s*:/i.test(line));
    const disposition = index >= 0 ? headers[index]! : "";
    if (parameter(disposition, "name") === field) {
      headers[index] = `Content-Disposition: form-data; name="${field}"; filename="upload"`;
      const rewritten = Buffer.concat([body.subarray(0, headersStart), Buffer.from(headers.join("\r\n"), "latin1"), body.subarray(headersEnd)]);
      return { fileName: fileNameOf(disposition), body: rewritten };
    }
    at = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headersEnd);
    if (at >= 0) at += 2;
  }
  return null;
}

/** The file name a Content-Disposition line (read as ISO-8859-1, byte for character) gives. */
function fileNameOf(disposition: string): string | null {
  const extended = /;\s*filename\*\s*=\s*"?([\w!#$&+.^`|~-]+)'[\w-]*'([^";\s]*)"?/i.exec(disposition);
  if (extended) {
    const charset = extended[1]!.toLowerCase();
    const bytes = percentDecoded(extended[2]!);
    if (bytes && (charset === "utf-8" || charset === "utf8")) return utf8OrLatin1(bytes);
    if (bytes && (charset === "iso-8859-1" || charset === "latin1")) return bytes.toString("latin1");
  }
  const quoted = parameter(disposition, "filename");
  if (quoted === null) return null;
  const bytes = Buffer.from(quoted.replace(/%22/g, '"').replace(/%0D/gi, "\r").replace(/%0A/gi, "\n"), "latin1");
  return utf8OrLatin1(bytes);
}

/** A parameter's value, quoted (backslash escapes undone) or a bare token; null when absent. */
function parameter(disposition: string, name: string): string | null {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, "i").exec(disposition);
  if (!match) return null;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2]!;
}

function percentDecoded(text: string): Buffer | null {
  if (!/^(?:[^%]|%[0-9a-fA-F]{2})*$/.test(text)) return null;
  return Buffer.from(text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))), "latin1");
}

function utf8OrLatin1(bytes: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString("latin1");
  }
}
