/**
 * Misspelled queries for measuring typo tolerance (`npm run eval -- --typos`): each query gets
 * one edit (an adjacent swap, a dropped letter, an inserted letter or a substituted one) in one
 * or two of its words of 5 letters or more, chosen by a seeded generator, so every run misspells
 * the same queries the same way. A query with no such word is left as it is.
 */
import { mulberry32 } from "../demo-data/conversations.js";

export type TypoEdit = "swap" | "drop" | "insert" | "substitute";

export interface MisspelledQuery {
  text: string;
  /** The words changed, as [original, misspelled]. */
  edits: [string, string][];
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const EDITS: readonly TypoEdit[] = ["swap", "drop", "insert", "substitute"];

/** The query with one edit in one or two (at most `maxWords`) of its words of at least `minLength` letters. */
export function misspell(text: string, seed: number, minLength = 5, maxWords = 2): MisspelledQuery {
  const random = mulberry32(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const words = [...text.matchAll(/\p{L}+/gu)].filter((match) => match[0].length >= minLength);
  if (words.length === 0) return { text, edits: [] };
  const count = Math.min(words.length, 1 + pick(Math.max(1, Math.min(2, maxWords))));
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(pick(words.length));
  const edits: [string, string][] = [];
  let result = text;
  // Right to left, so earlier offsets stay valid.
  for (const index of [...chosen].sort((a, b) => b - a)) {
    const match = words[index]!;
    const misspelled = editWord(match[0], EDITS[pick(EDITS.length)]!, pick, random);
    edits.push([match[0], misspelled]);
    result = result.slice(0, match.index) + misspelled + result.slice(match.index! + match[0].length);
  }
  return { text: result, edits: edits.reverse() };
}

function editWord(word: string, edit: TypoEdit, pick: (n: number) => number, random: () => number): string {
  const letter = (not?: string) => {
    let candidate = LETTERS[Math.floor(random() * LETTERS.length)]!;
    while (candidate === not?.toLowerCase()) candidate = LETTERS[Math.floor(random() * LETTERS.length)]!;
    return candidate;
  };
  switch (edit) {
    case "swap": {
      // Two different adjacent letters, else swapping changes nothing: substitute instead.
      const positions = [...Array(word.length - 1).keys()].filter((i) => word[i] !== word[i + 1]);
      if (positions.length === 0) return editWord(word, "substitute", pick, random);
      const i = positions[pick(positions.length)]!;
      return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    }
    case "drop": {
      const i = pick(word.length);
      return word.slice(0, i) + word.slice(i + 1);
    }
    case "insert": {
      const i = pick(word.length + 1);
      return word.slice(0, i) + letter() + word.slice(i);
    }
    case "substitute": {
      const i = pick(word.length);
      return word.slice(0, i) + letter(word[i]) + word.slice(i + 1);
    }
  }
}
