/**
 * The token counter: exact on ordinary text (compared with js-tiktoken itself), bounded on
 * pathological runs that make js-tiktoken quadratic, and run in a worker thread so the event
 * loop stays free while it counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { countTokens, countTokensOfEach, tokenCountPool } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";

/** Letters from a fixed-seed generator: no spaces, so one pre-token per text. */
function randomLetters(length: number, seed = 7): string {
  let state = seed;
  let text = "";
  for (let i = 0; i < length; i++) {
    state = (state * 16807) % 2147483647;
    text += String.fromCharCode(97 + (state % 26));
  }
  return text;
}

/** Counts timer turns of the main thread until `work` settles. */
async function timerTicksDuring<T>(work: Promise<T>): Promise<{ result: T; ticks: number }> {
  let ticks = 0;
  let settled = false;
  const ticking = (async () => {
    while (!settled) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      ticks += 1;
    }
  })();
  try {
    return { result: await work, ticks };
  } finally {
    settled = true;
    await ticking;
  }
}

const reference = new Tiktoken(o200kBase);

const ORDINARY_TEXTS = [
  "Our order service deadlocks under load. Here is the pg log.",
  "The two transactions lock rows in opposite order; add an index on orders(customer_id) and retry.",
  "  leading and trailing spaces,\ttabs,\n\nnewlines\r\nand  double  spaces  ",
  "function fuse(lists) {\n  return lists.flatMap((list, p) => list.map((id, r) => [id, 1 / (60 + r)]));\n}",
  "See https://example.com/docs/search?query=hybrid+ranking&alpha=0.5#reciprocal-rank-fusion for details.",
  "Prices: 1234567 EUR, 3.14159, 2026-05-01T12:00:00Z, +49 30 1234567",
  "Ünïcödé façade — naïve café, 東京で会いましょう, Привет мир, مرحبا 👩‍💻🚀",
  "They'll say it's fine, we're sure: I'd've DONE it, you've SEEN it.",
  "<|endoftext|> is only text in a message",
  `${"A paragraph about fusing keyword and semantic rankings with reciprocal rank fusion. ".repeat(200)}`,
  "x",
];

beforeAll(async () => {
  await countTokens("warm the worker up"); // the thread builds its rank tables once
});

afterAll(async () => {
  await closeWorkerPools();
});

describe("countTokens", () => {
  it("counts ordinary text exactly as js-tiktoken does (o200k_base)", async () => {
    const expected = ORDINARY_TEXTS.map((text) => reference.encode(text, [], []).length);
    expect(await countTokensOfEach(ORDINARY_TEXTS)).toEqual(expected);
    expect(await countTokens(ORDINARY_TEXTS[0]!)).toBe(expected[0]);
    expect(await countTokens("")).toBe(0);
  });

  it("counts a 100,000-letter run, closely, where js-tiktoken alone would block for many minutes", async () => {
    // One letter repeated: js-tiktoken merges it into tokens of 8 letters.
    expect(await countTokens("a".repeat(100_000))).toBe(12_500);
    // Random letters: compare with the exact count of a 1,000-letter sample, scaled up.
    const run = randomLetters(100_000);
    const perLetter = reference.encode(run.slice(0, 1_000)).length / 1_000;
    const counted = await countTokens(run);
    expect(Math.abs(counted - perLetter * run.length) / (perLetter * run.length)).toBeLessThan(0.03);
    // Inside ordinary text the run's pieces shift by its leading space; the estimate barely moves.
    const prose = "Here is the token the client pasted: ";
    const mixed = await countTokens(`${prose}${run} and that is all.`);
    const around = reference.encode(prose).length + reference.encode(" and that is all.").length;
    expect(Math.abs(mixed - around - counted) / counted).toBeLessThan(0.01);
  });

  it("bounds runs of whitespace and punctuation too, and never cuts a surrogate pair in two", async () => {
    const [spaces, dashes, emoji] = await countTokensOfEach([" ".repeat(50_000), "-".repeat(50_000), `!${"😀".repeat(20_000)}`]);
    // js-tiktoken has a token for 64 dashes: the cut pieces match it.
    expect(reference.encode("-".repeat(640)).length).toBe(10);
    expect(Math.abs(dashes! - 50_000 / 64)).toBeLessThanOrEqual(2);
    // It also has one for 128 spaces, so pieces of 64 count a long run of spaces up to twice.
    expect(spaces).toBeGreaterThanOrEqual(50_000 / 128);
    expect(spaces).toBeLessThanOrEqual(50_000 / 64 + 2);
    // One token per emoji; cutting pairs in two would add about 3 % of replacement characters.
    expect(reference.encode(`!${"😀".repeat(30)}`).length).toBe(31);
    expect(Math.abs(emoji! - 20_001)).toBeLessThanOrEqual(20);
  });

  it("counts in a worker thread: the event loop keeps turning while a pathological batch is counted", async () => {
    const submitted = tokenCountPool().tasksSubmitted;
    const batch = [randomLetters(20_000, 1), randomLetters(20_000, 2), randomLetters(20_000, 3)];
    const { result, ticks } = await timerTicksDuring(countTokensOfEach(batch));
    expect(result).toHaveLength(3);
    // Counting on the main thread would hold the loop for the whole batch (five minutes with
    // js-tiktoken alone, measured here): no timer could fire before it returned.
    expect(ticks).toBeGreaterThanOrEqual(3);
    // The whole batch is one task for the pool.
    expect(tokenCountPool().tasksSubmitted - submitted).toBe(1);
  });
});
