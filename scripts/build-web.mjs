// Builds the web app (web/ → web/dist) on install, so `npm ci && npm start` serves it at `/`.
// Skipped, with a note, when Vite is not installed (an install without it): the gateway then
// sends `/` to GraphiQL and says how to build the app.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

if (!existsSync(new URL("../node_modules/vite/package.json", import.meta.url))) {
  console.warn("web app not built: vite is not installed (npm run build:web builds it)");
  process.exit(0);
}
const result = spawnSync("npx", ["--no-install", "vite", "build", "--config", "web/vite.config.ts", "--logLevel", "warn"], { stdio: "inherit" });
process.exit(result.status ?? 1);
