/**
 * The demo generator at the benchmark's scale: 100,000 conversations, made one at a time. Seconds
 * of CPU (150 s at load 20), so it lives here rather than in the unit tests of the pre-commit loop
 * (test/unit/demo-data.test.ts), and runs in \`npm test\`. Counted, not timed.
 */
import { describe, expect, it } from "@jest/globals";
import { demoConversations } from "../../lib/demo-data/conversations.js";

describe("demo conversation generator at scale", () => {
  it("makes 100,000 conversations, each with messages", () => {
    let count = 0;
    let messages = 0;
    for (const conversation of demoConversations({ count: 100_000, seed: 3 })) {
      count += 1;
      messages += conversation.messages.length;
    }
    expect(count).toBe(100_000);
    expect(messages).toBeGreaterThan(100_000 * 2);
  }, 600_000);
});
