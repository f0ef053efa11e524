/**
 * The local embedding model runs in a worker thread: while it embeds, the main thread's event
 * loop keeps turning (counted in timer ticks, not timed).
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { UniversalSentenceEncoderEmbedder } from "../../lib/retrieval/embeddings/universal-sentence-encoder.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";

afterAll(async () => {
  await closeWorkerPools();
});

describe("UniversalSentenceEncoderEmbedder in its worker thread", () => {
  it("keeps the event loop turning while it embeds", async () => {
    const embedder = new UniversalSentenceEncoderEmbedder();
    await embedder.load();
    const paragraphs = Array.from(
      { length: 24 },
      (_, i) => `Paragraph ${i}: the order service deadlocks when two transactions update inventory rows in opposite order; ` + "we added an index and retried. ".repeat(10),
    );
    let ticks = 0;
    let done = false;
    const ticking = (async () => {
      while (!done) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        ticks += 1;
      }
    })();
    const vectors = await embedder.embed(paragraphs).finally(() => {
      done = true;
    });
    await ticking;
    expect(vectors).toHaveLength(24);
    // Six model calls of about a quarter of a second each. On the main thread the loop turned
    // only between calls (a handful of ticks); off it, timers keep firing throughout.
    expect(ticks).toBeGreaterThanOrEqual(50);
    // Loading the model's weights into a fresh thread is most of this test: 15 s at load 10 and
    // 57 s at load 15, against Jest's default 60 s. The limit only stops a hang.
  }, 180_000);
});
