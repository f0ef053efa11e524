/**
 * Component tests (Vitest) for the app's logic worth testing without a browser: highlights from
 * match ranges, the search page's URL state, and errors in words. They run in Node: what they
 * render goes through react-dom/server, so no DOM emulation is needed. `npm test` and
 * `npm run test:fast` run them before Jest; the browser tests (test/browser) cover the rest.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: "automatic", importSource: "react" } },
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    environment: "node",
    // The property tests' work is counted (fast-check's numRuns), not timed: under load a
    // 500-run property took over Vitest's default 5 s and failed a run that had nothing wrong.
    // The limit only stops a test that hangs, as Jest's does (jest.config.js).
    testTimeout: 60_000,
  },
});
