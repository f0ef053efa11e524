/**
 * The extractive answer, written without a model: the best sentences of the top passages, each
 * followed by its citation. A sentence scores by how many distinct query words it holds, as the
 * highlights marked them (PostgreSQL's English stemming, the keyword providers' own analysis);
 * ties go to the better-ranked passage, then to the earlier sentence; every passage's best
 * sentence comes before any passage's second. Deterministic and offline.
 */

export interface ExtractivePassage {
  number: number;
  text: string;
  /** The query's words in the text, as highlights found them (empty for a passage found by meaning only). */
  ranges: readonly { start: number; end: number }[];
}

export interface ExtractiveCitation {
  number: number;
  /** Where the label is in the answer. */
  start: number;
  end: number;
  /** The quoted sentence's place in its passage's text. */
  quoteStart: number;
  quoteEnd: number;
}

export interface ExtractiveAnswer {
  text: string;
  citations: ExtractiveCitation[];
  /** The best sentence alone was longer than maxLength and was cut. */
  truncated: boolean;
}

/** Enough to answer, few enough to read. */
export const MAX_EXTRACTIVE_SENTENCES = 3;

interface Sentence {
  number: number;
  rank: number;
  start: number;
  end: number;
  score: number;
}

/** Sentence ends: `.`, `!`, `?` (and closing quotes or brackets) before whitespace, or a line break. */
const SENTENCE_END = /[.!?…]+["'”’)\]]*(?=\s)|\n+/gu;

export function sentencesOf(text: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  let start = 0;
  const push = (end: number) => {
    const slice = text.slice(start, end);
    const lead = slice.length - slice.trimStart().length;
    const trimmed = slice.trim();
    if (trimmed.length > 0) spans.push({ start: start + lead, end: start + lead + trimmed.length });
  };
  for (const match of text.matchAll(SENTENCE_END)) {
    const end = match.index + match[0].length;
    push(end);
    start = end;
  }
  push(text.length);
  return spans;
}

export function extractiveAnswer(passages: readonly ExtractivePassage[], maxLength: number): ExtractiveAnswer {
  const sentences: Sentence[] = [];
  passages.forEach((passage, rank) => {
    for (const span of sentencesOf(passage.text)) {
      const words = new Set(passage.ranges.filter((range) => range.start >= span.start && range.end <= span.end).map((range) => passage.text.slice(range.start, range.end).toLowerCase()));
      sentences.push({ number: passage.number, rank, ...span, score: words.size });
    }
  });
  if (sentences.length === 0) return { text: "", citations: [], truncated: false };
  const best = Math.max(...sentences.map((sentence) => sentence.score));
  // Sentences that hold a query word; when none does (every passage found by meaning), the top
  // passage's first sentence speaks for them.
  const ranked = (best > 0 ? sentences.filter((sentence) => sentence.score > 0) : [sentences[0]!]).sort((a, b) => b.score - a.score || a.rank - b.rank || a.start - b.start);
  // Each passage's best sentence before any passage's second: an answer that cites several
  // sources is checkable against more than one, and it reaches the relevant one more often
  // (docs/answers.md has the SciFact figures).
  const quoted = new Set<number>();
  const firsts: Sentence[] = [];
  const seconds: Sentence[] = [];
  for (const sentence of ranked) {
    if (quoted.has(sentence.number)) seconds.push(sentence);
    else {
      quoted.add(sentence.number);
      firsts.push(sentence);
    }
  }
  const candidates = [...firsts, ...seconds];

  let text = "";
  const citations: ExtractiveCitation[] = [];
  let truncated = false;
  // The same sentence in several sources (a runbook pasted into three conversations) is quoted
  // once: said three times, it reads as a stutter, not as three confirmations.
  const said = new Set<string>();
  const quoteOf = (sentence: Sentence) => passages.find((passage) => passage.number === sentence.number)!.text.slice(sentence.start, sentence.end);
  const sameWords = (quote: string) => quote.toLowerCase().replace(/\s+/gu, " ").trim();
  const distinct = candidates.filter((sentence) => {
    const key = sameWords(quoteOf(sentence));
    if (said.has(key)) return false;
    said.add(key);
    return true;
  });
  for (const sentence of distinct.slice(0, MAX_EXTRACTIVE_SENTENCES)) {
    const label = `[${sentence.number}]`;
    const quote = quoteOf(sentence);
    const separator = text.length > 0 ? " " : "";
    const needed = separator.length + quote.length + 1 + label.length;
    if (text.length + needed > maxLength) {
      if (text.length > 0) continue;
      // Not even the best sentence fits: cut it at a word, and say so.
      const room = maxLength - 1 - label.length - 1;
      if (room < 1) return { text: "", citations: [], truncated: true };
      const cut = quote.slice(0, room).replace(/\s+\S*$/u, "") || quote.slice(0, room);
      text = `${cut}… ${label}`;
      citations.push({ number: sentence.number, start: text.length - label.length, end: text.length, quoteStart: sentence.start, quoteEnd: sentence.start + cut.length });
      truncated = true;
      break;
    }
    text += `${separator}${quote} `;
    citations.push({ number: sentence.number, start: text.length, end: text.length + label.length, quoteStart: sentence.start, quoteEnd: sentence.end });
    text += label;
  }
  return { text, citations, truncated };
}
