/**
 * Our own bound on a model's output, on top of the `max_tokens` the vendor is told: a broken or
 * hostile endpoint may ignore it and stream forever. Text is only passed on (to `onText`, into
 * the result) once it is known to fit in `maxOutputTokens`, counted with the project's token
 * counter (o200k_base, lib/text/token-count.ts).
 *
 * Counting every delta in the worker would cost a round trip per token, so the check is lazy:
 * a token is at least one UTF-8 byte, so the bytes not yet counted are an upper bound on their
 * tokens; only when that bound could pass the limit is the uncounted text counted (one worker
 * task), and then the next check comes after as many bytes as tokens are left. The total is a
 * sum of segment counts (a cut between segments may add a token). Other vendors' tokenizers
 * differ from o200k_base by a few percent either way; the vendor's own `max_tokens` normally
 * stops it first. When the counter refuses (its queue full), the byte bound stands in for it:
 * the output is cut early rather than late.
 */
import { countTokens } from "../text/token-count.js";

export interface AcceptedText {
  /** The part of the delta that fits (all of it, unless `full`). */
  text: string;
  /** The limit is reached: stop reading. */
  full: boolean;
}

export class OutputBudget {
  private counted = 0;
  private uncounted = "";
  private uncountedBytes = 0;
  private reachedLimit = false;
  /** Everything accepted so far. */
  text = "";

  constructor(readonly maxTokens: number) {}

  get full(): boolean {
    return this.reachedLimit;
  }

  /** Tokens accepted so far (counted, plus the uncounted rest counted now). */
  async tokens(): Promise<number> {
    await this.countUncounted(true);
    return this.counted;
  }

  /** Takes one streamed delta: returns the part of it that fits. */
  async accept(delta: string): Promise<AcceptedText> {
    if (this.reachedLimit) return { text: "", full: true };
    if (delta.length === 0) return { text: "", full: false };
    const bytes = Buffer.byteLength(delta, "utf8");
    if (this.counted + this.uncountedBytes + bytes <= this.maxTokens) return this.take(delta, bytes);
    await this.countUncounted();
    const left = this.maxTokens - this.counted;
    // The uncounted carry (the last word so far) and the delta, counted together.
    if ((await count(this.uncounted + delta)) <= left) {
      // Exactly at the limit is not past it: the stream may still end by itself.
      return this.take(delta, bytes);
    }
    // The delta passes the limit: keep its longest prefix that fits (binary search over code
    // points, a handful of counts, once per generation).
    const points = Array.from(delta);
    let low = 0;
    let high = points.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if ((await count(this.uncounted + points.slice(0, middle).join(""))) <= left) low = middle;
      else high = middle - 1;
    }
    const fits = points.slice(0, low).join("");
    this.counted = this.maxTokens;
    this.uncounted = "";
    this.uncountedBytes = 0;
    this.text += fits;
    this.reachedLimit = true;
    return { text: fits, full: true };
  }

  private take(delta: string, bytes: number): AcceptedText {
    this.uncounted += delta;
    this.uncountedBytes += bytes;
    this.text += delta;
    return { text: delta, full: false };
  }

  // Private: counts the uncounted text up to its last " word" boundary and carries the rest, so
  // that segments end where the tokenizer's own pre-tokens do (o200k_base joins a space to the
  // word after it): the sum of the segments' counts is then the count of the whole.
  private async countUncounted(final = false): Promise<void> {
    if (this.uncounted.length === 0) return;
    const cut = final ? this.uncounted.length : lastWordStart(this.uncounted);
    if (cut === 0) return;
    const segment = this.uncounted.slice(0, cut);
    this.counted += await count(segment);
    this.uncounted = this.uncounted.slice(cut);
    this.uncountedBytes = Buffer.byteLength(this.uncounted, "utf8");
  }
}

/** Where the last word that follows a space starts (0: none after the first character). */
function lastWordStart(text: string): number {
  for (let i = text.length - 2; i > 0; i--) {
    if (text[i] === " " && text[i + 1] !== " ") return i;
  }
  return 0;
}

async function count(text: string): Promise<number> {
  try {
    return await countTokens(text);
  } catch {
    return Buffer.byteLength(text, "utf8");
  }
}
