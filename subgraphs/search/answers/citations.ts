/**
 * Citations in a generated answer: the `[n]` labels the model wrote, each checked against the
 * passages that were in its prompt. A label naming a passage that was not there (the model
 * invented it, or a passage's text tried to make it cite something) is taken out of the text
 * and reported; it never reaches the client as a citation.
 */

export interface CitationSpan {
  /** The passage cited (1-based, as in the prompt). */
  number: number;
  /** Where its label is in the answer's text: `text.slice(start, end)` is `[n]`. */
  start: number;
  end: number;
}

export interface CheckedCitations {
  /** The text with every invalid label removed (valid groups like `[1, 2]` written as `[1][2]`). */
  text: string;
  citations: CitationSpan[];
  /** Labels that named no passage of the prompt, as written, in order. */
  dropped: string[];
}

/** `[3]`, `[1, 2]`, `[1,2,3]`: numbers of at most 3 digits, so nothing unbounded is parsed. */
const LABEL = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

export function checkCitations(answer: string, passageCount: number): CheckedCitations {
  const citations: CitationSpan[] = [];
  const dropped: string[] = [];
  let text = "";
  let last = 0;
  for (const match of answer.matchAll(LABEL)) {
    text += answer.slice(last, match.index);
    last = match.index + match[0].length;
    for (const written of match[1]!.split(",")) {
      const number = Number(written.trim());
      if (number >= 1 && number <= passageCount) {
        const label = `[${number}]`;
        citations.push({ number, start: text.length, end: text.length + label.length });
        text += label;
      } else {
        dropped.push(`[${written.trim()}]`);
      }
    }
  }
  text += answer.slice(last);
  return { text, citations, dropped };
}
