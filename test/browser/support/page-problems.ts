/**
 * What should never happen on a page of the app, collected as the page runs: a script error, a
 * console error, an answer of 400 or more. Automatic persisted queries answer an operation the
 * gateway has not seen yet with PERSISTED_QUERY_NOT_FOUND in a 200 (gateway/persisted-operations.ts,
 * as Apollo Server does), so the protocol working is no problem here. Left out, because a test
 * means it: with `allowRefusedUploads`, a refused `POST /documents`.
 * Chromium also logs each failed answer on the console ("Failed to load resource: the server
 * responded with a status of …") without saying which request it was, so those lines are left to
 * the response listener, which reads each failed answer and keeps every other one.
 */
import type { Page } from "playwright-core";

const FAILED_ANSWER_ON_CONSOLE = /^Failed to load resource: the server responded with a status of \d+/;

export interface WatchOptions {
  allowRefusedUploads?: boolean;
}

export interface PageProblems {
  /** Every problem noted so far, once the failed answers' bodies have been read. */
  settled(): Promise<string[]>;
}

export function watchForProblems(page: Page, options: WatchOptions = {}): PageProblems {
  const problems: string[] = [];
  const pending: Promise<void>[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !FAILED_ANSWER_ON_CONSOLE.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() < 400) return;
    const path = new URL(response.url()).pathname;
    if (options.allowRefusedUploads && path === "/documents" && response.request().method() === "POST") return;
    pending.push(
      response
        .text()
        .catch(() => "")
        .then((body) => {
          problems.push(`HTTP ${response.status()} ${response.request().method()} ${response.url()}: ${body.slice(0, 300)}`);
        }),
    );
  });
  return {
    async settled() {
      await Promise.all(pending);
      return problems;
    },
  };
}
