/**
 * The token counter, run in a worker thread (see token-count.ts): o200k_base through
 * js-tiktoken, exact for ordinary text and bounded in cost for any text.
 *
 * Why bounded needs care: js-tiktoken splits text into pre-tokens with the encoding's own
 * regular expression (words with their leading space, runs of 1–3 digits, runs of punctuation,
 * runs of whitespace) and then merges each pre-token's bytes with a naive byte-pair loop whose
 * cost grows with the square of the pre-token's length or worse: 1,000 letters without a space
 * take ~90 ms, 10,000 take 10–16 s. Ordinary prose has no pre-token longer than a long word, so
 * it is counted at ~3.5 MB/s.
 *
 * So a text is split with the same regular expression first. Stretches whose pre-tokens are all
 * at most {@link LONG_PIECE_CHARS} characters go to the encoder whole (exactly what it would
 * count). A longer pre-token (a run of letters, punctuation or whitespace) is hard-cut into
 * pieces of that size, each counted on its own; past {@link EXACT_LONG_RUN_CHARS} characters of
 * such runs in one text the rest is extrapolated from the tokens per character seen so far.
 * How far that can differ from the unbounded count, measured on 10,000-character runs:
 * one letter repeated 0 %, random letters +0.7 %, a long word repeated +5 %, base64 +0.8 %;
 * plus at most a token or two where a run meets ordinary text. The client may always send its
 * own `tokenCount`; this is the server's estimate when it does not.
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";

/** Longest pre-token counted as it is (~0.5 ms each at worst); longer ones are cut to this size. */
export const LONG_PIECE_CHARS = 64;
/** Characters of over-long runs counted piece by piece in one text (~35 ms); the rest is extrapolated. */
export const EXACT_LONG_RUN_CHARS = 4_096;

// Once per thread: building the rank table takes about a second.
const encoder = new Tiktoken(o200kBase);
// (Flags "gu": the pattern uses \p{…} classes, as js-tiktoken compiles it.)
const preTokenPattern = new RegExp(o200kBase.pat_str, "gu");

/** The worker's task: one count per text, in order. */
export default function countTokensOfEach(texts: readonly string[]): number[] {
  return texts.map(countTokensBounded);
}

export function countTokensBounded(text: string): number {
  const longRuns = { exactChars: 0, exactTokens: 0 };
  let total = 0;
  let ordinaryStart = 0;
  for (const match of text.matchAll(preTokenPattern)) {
    if (match[0].length <= LONG_PIECE_CHARS) continue;
    total += encodedLength(text.slice(ordinaryStart, match.index));
    total += countLongRun(match[0], longRuns);
    ordinaryStart = match.index + match[0].length;
  }
  return Math.round(total + encodedLength(text.slice(ordinaryStart)));
}

function countLongRun(run: string, seen: { exactChars: number; exactTokens: number }): number {
  let tokens = 0;
  let start = 0;
  while (start < run.length && seen.exactChars < EXACT_LONG_RUN_CHARS) {
    let end = Math.min(start + LONG_PIECE_CHARS, run.length);
    // Never cut a surrogate pair in two: each half would count as a replacement character.
    if (end < run.length && isLowSurrogate(run.charCodeAt(end))) end -= 1;
    const pieceTokens = encodedLength(run.slice(start, end));
    seen.exactChars += end - start;
    seen.exactTokens += pieceTokens;
    tokens += pieceTokens;
    start = end;
  }
  if (start < run.length) tokens += ((run.length - start) * seen.exactTokens) / seen.exactChars;
  return tokens;
}

function encodedLength(text: string): number {
  if (text.length === 0) return 0;
  // No special tokens: "<|endoftext|>" in a message is text the model would read as text (and the
  // encoder's default, throwing on it, would turn a user's message into a server error).
  return encoder.encode(text, [], []).length;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
