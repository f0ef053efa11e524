/**
 * The search page's JavaScript stays within 250 KB gzipped (issue 21): what a browser downloads
 * before the first search is the entry chunk and the chunks it preloads, measured on the build
 * the gateway serves (web/dist, built on install). Charts are on the pages that draw them: the
 * chart library must not be in what the search page loads.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "@jest/globals";
import { WEB_APP_DIRECTORY } from "../../gateway/web-app.js";
import { ensureWebAppBuilt } from "./support/web-stack.js";

const BUDGET_BYTES = 250 * 1024;

/** The entry script and every module it preloads, as index.html names them. */
function searchPageScripts(): string[] {
  const html = fs.readFileSync(path.join(WEB_APP_DIRECTORY, "index.html"), "utf8");
  const sources = [...html.matchAll(/<script[^>]+type="module"[^>]+src="([^"]+)"/g), ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)].map((match) => match[1]!);
  return [...new Set(sources)];
}

beforeAll(() => ensureWebAppBuilt(), 120_000);

describe("the search page's JavaScript", () => {
  it("is at most 250 KB gzipped and holds no chart library", () => {
    const scripts = searchPageScripts();
    expect(scripts.length).toBeGreaterThan(0);
    let gzipped = 0;
    for (const source of scripts) {
      const body = fs.readFileSync(path.join(WEB_APP_DIRECTORY, source));
      gzipped += gzipSync(body, { level: 9 }).length;
      // recharts' own class names: present in any bundle that holds it.
      expect({ source, recharts: body.includes("recharts-wrapper") }).toEqual({ source, recharts: false });
    }
    console.log(`search page JavaScript: ${(gzipped / 1024).toFixed(1)} KB gzipped in ${scripts.length} file(s) (budget ${BUDGET_BYTES / 1024} KB)`);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
