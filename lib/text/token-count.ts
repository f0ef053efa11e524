/**
 * Counts tokens the way current OpenAI models do (o200k_base, via js-tiktoken, whose rank
 * tables ship inside the npm package: no download at run time). The tables take about a second
 * to load, so they load on first use, once per process.
 */
import { Tiktoken } from "js-tiktoken/lite";

let encoder: Promise<Tiktoken> | null = null;

function loadEncoder(): Promise<Tiktoken> {
  encoder ??= import("js-tiktoken/ranks/o200k_base").then((ranks) => new Tiktoken(ranks.default));
  return encoder;
}

export async function countTokens(text: string): Promise<number> {
  if (text.length === 0) return 0;
  return (await loadEncoder()).encode(text).length;
}
