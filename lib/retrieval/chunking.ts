/**
 * Splits long text into overlapping chunks for embedding. Sentence encoders read a bounded
 * amount of text and average away whatever a long input says, so a long conversation is
 * embedded as several chunks and scored by its best one. Cuts prefer paragraph, then sentence,
 * then word boundaries; consecutive chunks overlap so an idea split at a cut is whole in one.
 */
export interface ChunkOptions {
  /** Target maximum characters per chunk. */
  maxChars: number;
  /** Characters repeated from the end of one chunk at the start of the next. */
  overlapChars: number;
  /** Chunks beyond this are dropped: a bound on indexing cost per entity. */
  maxChunks: number;
}

export const DEFAULT_CHUNKING: ChunkOptions = { maxChars: 1_200, overlapChars: 200, maxChunks: 64 };

export function chunkText(text: string, options: ChunkOptions = DEFAULT_CHUNKING): string[] {
  const normalized = text.replace(/\r\n?/g, "\n").replace(/[ \t]+/g, " ").trim();
  if (normalized.length === 0) return [];
  if (normalized.length <= options.maxChars) return [normalized];

  const chunks: string[] = [];
  let start = 0;
  while (start < normalized.length && chunks.length < options.maxChunks) {
    let end = Math.min(start + options.maxChars, normalized.length);
    if (end < normalized.length) end = bestCut(normalized, start, end);
    chunks.push(normalized.slice(start, end).trim());
    if (end >= normalized.length) break;
    // Step back by the overlap, but always move forward, and start on a word boundary.
    let next = Math.max(end - options.overlapChars, start + 1);
    const space = normalized.indexOf(" ", next);
    if (space !== -1 && space < end) next = space + 1;
    start = next;
  }
  return chunks.filter((chunk) => chunk.length > 0);
}

/** The last paragraph, sentence or word boundary in the second half of [start, end). */
function bestCut(text: string, start: number, end: number): number {
  const floor = start + Math.floor((end - start) / 2);
  const window = text.slice(floor, end);
  for (const pattern of [/\n\n/g, /[.!?]["')\]]?\s/g, /\n/g, /\s/g]) {
    let last = -1;
    for (const match of window.matchAll(pattern)) last = match.index! + match[0].length;
    if (last > 0) return floor + last;
  }
  return end;
}

/** Chunks sized to what the embedding model reads, overlapping by about a sixth. */
export function chunkingFor(embedder: { maxInputChars?: number }): ChunkOptions {
  const maxChars = embedder.maxInputChars ?? DEFAULT_CHUNKING.maxChars;
  return { maxChars, overlapChars: Math.round(maxChars / 6), maxChunks: DEFAULT_CHUNKING.maxChunks };
}
