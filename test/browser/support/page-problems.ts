/**
 * What should never happen on a page of the app, collected as the page runs: a script error, a
 * console error, a request that failed. One failure is part of the protocol and left out:
 * automatic persisted queries answer an operation the gateway has not seen yet with HTTP 404
 * PERSISTED_QUERY_NOT_FOUND (gateway/persisted-operations.ts, as Apollo Server does); the client
 * then sends the document and is served. Chromium still logs that 404 as a console error
 * ("Failed to load resource"), without saying which request it was, so console 404s are left to
 * the response listener, which reads each failed answer and keeps every other one.
 */
import type { Page } from "playwright-core";

const RESOURCE_404 = /^Failed to load resource: the server responded with a status of 404/;

export function watchForProblems(page: Page, problems: string[]): void {
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !RESOURCE_404.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on("response", async (response) => {
    if (response.status() < 400) return;
    const body = await response.text().catch(() => "");
    if (response.status() === 404 && body.includes("PERSISTED_QUERY_NOT_FOUND")) return;
    problems.push(`HTTP ${response.status()} from ${response.url()}: ${body.slice(0, 300)}`);
  });
}
