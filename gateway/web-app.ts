/**
 * The web app (web/, built by Vite into web/dist) served from the gateway's own port, so the
 * browser talks to `/graphql` on its own origin: no CORS, no second server to run.
 *
 * The built files are read once at start into memory, each with its gzip and Brotli variants and
 * an ETag. Only those files are ever served (a URL is looked up in that map, never joined to a
 * path on disk), so no request can reach another file. Every other GET that asks for HTML is one
 * of the app's own routes (`/search?q=…`, `/saved`, …) and gets `index.html`; the app's router
 * reads the URL. Hashed assets (`/assets/name-HASH.js`) are immutable for a year; `index.html` is
 * revalidated on every load so a new build shows at once.
 *
 * In development the gateway writes the dev token into `index.html` (a meta tag the app reads),
 * as it pre-fills GraphiQL's headers; in production nothing is written and the app asks for a
 * token. The page is then `private`: no shared cache may keep it.
 *
 * Security headers: a Content-Security-Policy that allows only this origin (scripts, styles,
 * fetches, images and fonts), no framing, no MIME sniffing, no referrer to other sites.
 */
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { besideModule } from "../lib/project-files.js";
import { compressBody, sendCompressed, type CompressedBody } from "./compressed-body.js";

export interface WebAppOptions {
  /** The built app (web/dist). */
  directory: string;
  /** Written into index.html for the app to use (development only). */
  devToken?: string | null;
}

export interface WebApp {
  /** Whether this request is for the app: a file of the build, or a GET of a page (accepts HTML). */
  wants(request: http.IncomingMessage, path: string): boolean;
  serve(request: http.IncomingMessage, response: http.ServerResponse, path: string): void;
  /** Files served (tests and the start-up log). */
  readonly files: number;
}

interface Served {
  contentType: string;
  cacheControl: string;
  body: CompressedBody;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};
/** Worth compressing; images and fonts already are. */
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt"]);

export const WEB_APP_SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
};

/** Where `npm run build:web` writes the app. */
export const WEB_APP_DIRECTORY = fileURLToPath(besideModule("../web/dist", import.meta.url));

/** The dev token's meta tag: the app reads it (web/src/session.ts). */
export const DEV_TOKEN_META = "context-search-dev-token";

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function prepare(body: Buffer, extension: string, cacheControl: string): Served {
  return {
    contentType: CONTENT_TYPES[extension] ?? "application/octet-stream",
    cacheControl,
    body: compressBody(body, COMPRESSIBLE.has(extension) && body.length > 512),
  };
}

function listFiles(directory: string, prefix = ""): string[] {
  return fs.readdirSync(path.join(directory, prefix), { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? listFiles(directory, relative) : entry.isFile() ? [relative] : [];
  });
}

/** The app, or null when it was not built (the gateway then says how to build it). */
export function loadWebApp(options: WebAppOptions): WebApp | null {
  const indexPath = path.join(options.directory, "index.html");
  if (!fs.existsSync(indexPath)) return null;
  const files = new Map<string, Served>();
  for (const relative of listFiles(options.directory)) {
    if (relative === "index.html") continue;
    const extension = path.extname(relative).toLowerCase();
    const immutable = relative.startsWith("assets/");
    files.set(`/${relative}`, prepare(fs.readFileSync(path.join(options.directory, relative)), extension, immutable ? "public, max-age=31536000, immutable" : "public, max-age=3600"));
  }
  let html = fs.readFileSync(indexPath, "utf8");
  if (options.devToken) html = html.replace("</head>", `<meta name="${DEV_TOKEN_META}" content="${escapeAttribute(options.devToken)}"></head>`);
  const index = prepare(Buffer.from(html), ".html", options.devToken ? "private, no-cache" : "no-cache");

  return {
    files: files.size + 1,
    wants(request, urlPath) {
      if (request.method !== "GET" && request.method !== "HEAD") return false;
      if (files.has(urlPath)) return true;
      // A page of the app: what a browser asks for when it navigates (Accept: text/html).
      return (request.headers.accept ?? "").includes("text/html") && !urlPath.startsWith("/assets/");
    },
    serve(request, response, urlPath) {
      const served = files.get(urlPath) ?? index;
      sendCompressed(request, response, served.body, {
        ...WEB_APP_SECURITY_HEADERS,
        "content-type": served.contentType,
        "cache-control": served.cacheControl,
        vary: "Accept-Encoding",
      });
    },
  };
}
