/**
 * An uploaded file's name as we store and show it, the same whichever way it came in (the
 * `uploadDocument` mutation, or the gateway's form upload `POST /documents`):
 *
 *     uploadedFileName("  Cafe\u0301.md ", "input.fileName")    // "Café.md" (NFC, trimmed)
 *     uploadedFileName("invoice\u202Efdp.exe", "input.fileName") // BAD_USER_INPUT naming the field
 *
 * Names are composed to NFC, so "Café" typed on macOS (NFD) and on Windows (NFC) is one name.
 * Control characters are refused, and so are the bidirectional controls: a right-to-left
 * override makes "invoice\u202Efdp.exe" display as "invoiceexe.pdf", the classic way to dress
 * one file up as another in a listing.
 */
import { badUserInput } from "../graphql/errors.js";

/** Longest file name kept, in characters (NTFS and ext4 both allow 255). */
export const MAX_FILE_NAME_LENGTH = 255;

// C0 controls, DEL and C1 controls: tabs and newlines have no place in a file name either.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069), marks (U+200E, U+200F, U+061C).
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `name` trimmed and in NFC, or BAD_USER_INPUT on `field` saying what to change. */
export function uploadedFileName(name: string, field: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw badUserInput(field, "must not be empty");
  // Bounded before NFC sees it: composing is linear, but there is no reason to compose a megabyte.
  if (trimmed.length > MAX_FILE_NAME_LENGTH * 4) throw badUserInput(field, `must be at most ${MAX_FILE_NAME_LENGTH} characters, got ${trimmed.length}`);
  const surrogate = UNPAIRED_SURROGATE.exec(trimmed);
  if (surrogate) throw badUserInput(field, `must be valid Unicode: unpaired surrogate at index ${surrogate.index}`);
  const fileName = trimmed.normalize("NFC");
  if (fileName.length > MAX_FILE_NAME_LENGTH) throw badUserInput(field, `must be at most ${MAX_FILE_NAME_LENGTH} characters, got ${fileName.length}`);
  const control = CONTROL.exec(fileName);
  if (control) throw badUserInput(field, `must not contain control characters (found ${codePoint(control[0])} at index ${control.index})`);
  const bidi = BIDI_CONTROL.exec(fileName);
  if (bidi) {
    throw badUserInput(field, `must not contain bidirectional control characters, which can make a name display as another (found ${codePoint(bidi[0])} at index ${bidi.index}); rename the file`);
  }
  return fileName;
}

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}
