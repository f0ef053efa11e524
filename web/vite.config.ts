/**
 * The web app's build: `npm run build:web` (run by `npm ci` too) writes web/dist, which the
 * gateway serves at `/` (gateway/web-app.ts). No dev server is needed: the app is static and
 * talks to `/graphql` on the origin it came from.
 *
 * JSX is compiled by Vite's own transformer (oxc); the React plugin would add only Fast Refresh,
 * which a build does not use. Pages other than search are split into chunks of their own, loaded
 * when opened, so the search page's JavaScript stays small (the chart library is on the
 * dashboard's and credits' chunks only).
 */
import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig } from "vite";

const require = createRequire(import.meta.url);
/** React Router's package maps every import condition to its development build (extra checks and warnings); a build takes the production one. */
const reactRouterProduction = path.join(path.dirname(require.resolve("react-router/package.json")), "dist/production/index.mjs");

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  publicDir: "public",
  resolve: { alias: [{ find: /^react-router$/, replacement: reactRouterProduction }] },
  oxc: { jsx: { runtime: "automatic", importSource: "react" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // Nothing inlined as data: URLs beyond tiny icons, so the CSP can stay strict.
    assetsInlineLimit: 1024,
    reportCompressedSize: true,
    rollupOptions: {
      // React Router marks its modules "use client" (for server components); a client-only build has nothing to preserve.
      onwarn(warning, warn) {
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
});
