/**
 * A folder for this Jest run's database images (test/support/database.ts): made before the first
 * file starts, so every worker sees it in its environment, and removed after the last
 * (global-teardown.mjs), so an image never outlives the migrations and seed code that built it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export default function globalSetup() {
  process.env.TEST_DATABASE_IMAGES = fs.mkdtempSync(path.join(os.tmpdir(), "context-search-test-images-"));
}
