/**
 * The web app in a real browser: Debian's Chromium (`apt-get install chromium`, which .ci/run
 * does) driven by playwright-core, against the whole product as `npm start` runs it (every
 * subgraph and the gateway, on a database of the file's own, seeded with the demo organization),
 * with the app the gateway serves at `/` from web/dist (built on install; built here if missing).
 *
 * Without Chromium the browser tests are skipped with a note, except on CI (CI=true), where a
 * missing browser fails them: CI must run them.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { WEB_APP_DIRECTORY } from "../../../gateway/web-app.js";
import { DEMO_USERS } from "../../../lib/demo-data/organization.js";
import { DEMO_ORGANIZATION_SEEDED, demoDocumentsIndexed, demoTokenFor } from "../../support/demo-organization.js";
import { SerperStandIn } from "../../support/external/serper-stand-in.js";
import { startTestStack, type TestStack } from "../../support/stack.js";

/** Where Chromium is: CHROMIUM_PATH, or Debian's package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((candidate) => fs.existsSync(candidate)) ?? null;

/**
 * Browser tests run when Chromium is installed, and always on CI, unless BROWSER_TESTS=off (CI's
 * Node 24 pass: the app runs in the browser, and its server side is the same code the pass tests).
 */
export const browserAvailable = process.env.BROWSER_TESTS !== "off" && (CHROMIUM_PATH !== null || process.env.CI === "true");
if (!browserAvailable) console.warn(process.env.BROWSER_TESTS === "off" ? "browser tests skipped: BROWSER_TESTS=off" : "browser tests skipped: Chromium is not installed (apt-get install chromium, or set CHROMIUM_PATH)");

/** Screenshots and other things a person reads after a CI run (gitignored). */
export const CI_OUTPUT_DIRECTORY = path.resolve(process.env.CI_OUTPUT_DIR ?? ".ci/output");

/** The flags the machine's notes give for headless Chromium here: no sandbox (root), no GPU, no background traffic. */
const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"];

export async function launchChromium(): Promise<Browser> {
  if (!CHROMIUM_PATH) throw new Error("Chromium is not installed: apt-get install chromium (or set CHROMIUM_PATH)");
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
}

/** Builds web/dist when it is missing (an install with scripts off); CI's install builds it. */
export function ensureWebAppBuilt(): void {
  if (fs.existsSync(path.join(WEB_APP_DIRECTORY, "index.html"))) return;
  const result = spawnSync("npx", ["--no-install", "vite", "build", "--config", "web/vite.config.ts", "--logLevel", "warn"], { stdio: "inherit" });
  if (result.status !== 0) throw new Error("npm run build:web failed");
}

export interface WebStack {
  test: TestStack;
  /** The app's origin, e.g. http://127.0.0.1:41234 */
  origin: string;
  /** A token of the demo organization's first user (an admin, as npm start's dev token). */
  demoToken: string;
  browser: Browser;
  /** A browser context calling as `token` (kept in localStorage, as the token field does). */
  context(token: string): Promise<BrowserContext>;
  stop(): Promise<void>;
}

export { demoTokenFor };

export async function startWebStack(env: Record<string, string> = {}): Promise<WebStack> {
  ensureWebAppBuilt();
  const test = await startTestStack(env, { gateway: { webApp: { directory: WEB_APP_DIRECTORY } }, database: { startingPoint: DEMO_ORGANIZATION_SEEDED } });
  try {
    await demoDocumentsIndexed(test, "web stack");
    const demoToken = await demoTokenFor(DEMO_USERS[0].id);
    const browser = await launchChromium();
    const origin = new URL(test.stack.gateway.url).origin;
    const contexts: BrowserContext[] = [];
    return {
      test,
      origin,
      demoToken,
      browser,
      async context(token: string) {
        const context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 900 } });
        await context.addInitScript((value) => localStorage.setItem("context-search-token", value), token);
        contexts.push(context);
        return context;
      },
      async stop() {
        for (const context of contexts) await context.close().catch(() => undefined);
        await browser.close().catch(() => undefined);
        await test.stop();
      },
    };
  } catch (error) {
    await test.stop();
    throw error;
  }
}

/**
 * startWebStack with a Serper stand-in of ours as the web provider (the files that show web hits,
 * slow or failing providers); its `stop` closes both.
 */
export type WebStackWithSerper = WebStack & { serper: SerperStandIn };

export async function startWebStackWithSerper(env: Record<string, string> = {}): Promise<WebStackWithSerper> {
  const serper = await SerperStandIn.start();
  try {
    const web = await startWebStack({ ...env, SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl });
    return {
      ...web,
      serper,
      async stop() {
        await web.stop();
        await serper.close();
      },
    };
  } catch (error) {
    await serper.close();
    throw error;
  }
}

/** Saves a full-page screenshot into the CI output folder (screenshots/<name>.png) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const file = path.join(CI_OUTPUT_DIRECTORY, "screenshots", `${name}.png`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

const AXE_SOURCE = fs.readFileSync(path.resolve("node_modules/axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2.1 A and AA rules
 * and best practices). Injected through the DevTools protocol, so the page's strict CSP (no
 * inline scripts) stays on while it runs.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node) => JSON.stringify(node.target)) }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}
