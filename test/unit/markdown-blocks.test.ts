/**
 * The doc-test conventions (test/support/markdown-blocks.ts), checked on README.md before any
 * stack starts: test:fast fails on a block the e2e test could not classify.
 */
import fs from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { readFencedBlocks } from "../support/markdown-blocks.js";

describe("readFencedBlocks", () => {
  it("reads each block's language, body, directives and the json variables block after it", () => {
    const markdown = [
      "Intro",
      "",
      '<!-- doc-test: expect "totalCount" -->',
      "```graphql",
      "query Q($n: Int) { conversations(first: $n) { totalCount } }",
      "```",
      "",
      "```json",
      '{ "n": 1 }',
      "```",
      "",
      "<!-- doc-test: skip — starts a server -->",
      "````sh",
      "npm start",
      "```",
      "````",
      "",
      "~~~text",
      "output",
      "~~~",
    ].join("\n");
    const { blocks, problems } = readFencedBlocks(markdown, "X.md");
    expect(problems).toEqual([]);
    expect(blocks.map((block) => [block.line, block.language])).toEqual([[4, "graphql"], [8, "json"], [13, "sh"], [18, "text"]]);
    expect(blocks[0]!.directives).toEqual([{ kind: "expect", value: "totalCount" }]);
    expect(blocks[0]!.next?.body).toBe('{ "n": 1 }');
    expect(blocks[2]!.directives).toEqual([{ kind: "skip", value: "starts a server" }]);
    expect(blocks[2]!.body).toBe("npm start\n```");
  });

  it.each([
    ["a block without a language", "```\nnpm start\n```", "X.md:1: a fenced block without a language"],
    ["a skip without its reason", "<!-- doc-test: skip -->\n```sh\nnpm start\n```", "X.md:1: doc-test: skip needs a reason"],
    ["a directive with text between it and its block", "<!-- doc-test: skip — slow -->\nSome prose.\n```sh\nnpm start\n```", "X.md:1: a doc-test directive must sit right above a fenced block"],
    ["a directive it does not know", "<!-- doc-test: run-twice -->\n```sh\nls\n```", 'X.md:1: unknown doc-test directive "run-twice"'],
    ["an expect that is not a JSON string", "<!-- doc-test: expect \"a -->\n```sh\nls\n```", "X.md:1: doc-test: expect takes a JSON string"],
    ["both a skip and an expect", '<!-- doc-test: skip — slow -->\n<!-- doc-test: expect "x" -->\n```sh\nls\n```', "X.md:3: a block is either skipped or expected"],
    ["a block never closed", "```sh\nls", "X.md:1: this fenced block is never closed"],
  ])("names the line of %s", (_case, markdown, problem) => {
    const { problems } = readFencedBlocks(markdown, "X.md");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });
});

it("README.md follows the conventions (its blocks themselves run in test/e2e/readme-examples.test.ts)", () => {
  expect(readFencedBlocks(fs.readFileSync("README.md", "utf8"), "README.md").problems).toEqual([]);
});
